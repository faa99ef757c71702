-- The rollup rows of each dimension's "nothing known" label (analytics.labels: device
-- other, browser and system Other, country Unknown, referrer Direct, campaign None) are
-- no longer stored: their counts are what a day's clicks leave after the stored values.
-- The account's rows go first, so that removing the link rows has nothing to subtract.

DELETE FROM account_dimensions WHERE (dimension, value) IN
    (VALUES (1, 'other'), (2, 'Other'), (3, 'Other'), (4, 'Unknown'), (5, 'Direct'), (6, 'None'));

-- Without its trigger for the while: every row it would touch is already gone.
DROP TRIGGER link_dimension_removed;
DELETE FROM link_dimensions WHERE (dimension, value) IN
    (VALUES (1, 'other'), (2, 'Other'), (3, 'Other'), (4, 'Unknown'), (5, 'Direct'), (6, 'None'));
CREATE TRIGGER link_dimension_removed AFTER DELETE ON link_dimensions BEGIN
    UPDATE account_dimensions SET clicks = clicks - OLD.clicks
        WHERE account_id = OLD.account_id AND dimension = OLD.dimension AND day = OLD.day
          AND value = OLD.value;
    DELETE FROM account_dimensions
        WHERE account_id = OLD.account_id AND dimension = OLD.dimension AND day = OLD.day
          AND value = OLD.value AND clicks <= 0;
END;
