-- The rollup rows of each dimension's "nothing known" label (storage.labels: device
-- other, browser and system Other, country Unknown, referrer Direct, campaign None) are
-- no longer stored: their counts are what a day's clicks leave after the stored values.
-- The account's rows go first, so that removing the link rows has nothing to subtract.

DELETE FROM account_dimensions WHERE (dimension, value) IN
    (VALUES (1, 'other'), (2, 'Other'), (3, 'Other'), (4, 'Unknown'), (5, 'Direct'), (6, 'None'));
DELETE FROM link_dimensions WHERE (dimension, value) IN
    (VALUES (1, 'other'), (2, 'Other'), (3, 'Other'), (4, 'Unknown'), (5, 'Direct'), (6, 'None'));
