-- Twin of SQLite's 0015: a link's rules and the app it opens are cached with it since 0012 and
-- 0014, so changing them counts as an outside change too (0006's data_changes; never a click
-- batch's human_clicks).
CREATE OR REPLACE TRIGGER link_rules_changed
    AFTER INSERT OR DELETE OR UPDATE OF document ON link_rules
    FOR EACH STATEMENT EXECUTE FUNCTION data_changed();
CREATE OR REPLACE TRIGGER link_apps_changed AFTER INSERT OR UPDATE OR DELETE ON link_apps
    FOR EACH STATEMENT EXECUTE FUNCTION data_changed();
CREATE OR REPLACE TRIGGER apps_changed
    AFTER DELETE OR UPDATE OF name, ios_app_store_id, android_package ON apps
    FOR EACH STATEMENT EXECUTE FUNCTION data_changed();
