-- Domains an account connects itself: as SQLite's 0017 (its comments say what each column is).
ALTER TABLE domains ADD COLUMN public_id text COLLATE "C";
ALTER TABLE domains ADD COLUMN token text COLLATE "C";
ALTER TABLE domains ADD COLUMN verified_at text COLLATE "C";
ALTER TABLE domains ADD COLUMN seen_at text COLLATE "C";
ALTER TABLE domains ADD COLUMN check_at text COLLATE "C";
ALTER TABLE domains ADD COLUMN checked_at text COLLATE "C";
ALTER TABLE domains ADD COLUMN check_error text;
ALTER TABLE domains ADD COLUMN root_redirect text;
ALTER TABLE domains ADD COLUMN not_found_redirect text;
UPDATE domains SET public_id = 'dom_' || substr(md5(random()::text || host), 1, 20), verified_at = created_at;
CREATE UNIQUE INDEX domains_public_id ON domains(public_id);
CREATE INDEX domains_due ON domains(check_at) WHERE check_at IS NOT NULL;

-- A periodic check writes check_at, checked_at and seen_at: what servers cache changes only
-- with the columns below.
DROP TRIGGER domains_changed ON domains;
CREATE TRIGGER domains_changed
    AFTER INSERT OR DELETE OR UPDATE OF host, account_id, verified_at, root_redirect, not_found_redirect
    ON domains FOR EACH STATEMENT EXECUTE FUNCTION data_changed();
