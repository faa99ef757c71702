-- Twin of SQLite's 0009: the rollup rows of each dimension's "nothing known" label are no
-- longer stored (see that file). The account's rows go first, so that the statement
-- trigger on link_dimensions finds nothing to subtract.

DELETE FROM account_dimensions WHERE (dimension, value) IN
    (VALUES (1, 'other'), (2, 'Other'), (3, 'Other'), (4, 'Unknown'), (5, 'Direct'), (6, 'None'));
DELETE FROM link_dimensions WHERE (dimension, value) IN
    (VALUES (1, 'other'), (2, 'Other'), (3, 'Other'), (4, 'Unknown'), (5, 'Direct'), (6, 'None'));
