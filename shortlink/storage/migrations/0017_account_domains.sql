-- Domains an account connects itself (docs/deployment.md, "Domains people connect themselves"):
-- each gets a public id, the token its TXT record must hold, when it was verified, when its
-- record was last seen (the grace period counts from there), when it is next checked, and what
-- `/` and an unknown code do on it. Domains connected before, by the operator's
-- `shortlink domain add`, count as verified. Only verified domains are served.
ALTER TABLE domains ADD COLUMN public_id TEXT;
ALTER TABLE domains ADD COLUMN token TEXT;
ALTER TABLE domains ADD COLUMN verified_at TEXT;
ALTER TABLE domains ADD COLUMN seen_at TEXT;
ALTER TABLE domains ADD COLUMN check_at TEXT;
ALTER TABLE domains ADD COLUMN checked_at TEXT;
ALTER TABLE domains ADD COLUMN check_error TEXT;
ALTER TABLE domains ADD COLUMN root_redirect TEXT;
ALTER TABLE domains ADD COLUMN not_found_redirect TEXT;
UPDATE domains SET public_id = 'dom_' || lower(hex(randomblob(10))), verified_at = created_at;
CREATE UNIQUE INDEX domains_public_id ON domains(public_id);
CREATE INDEX domains_due ON domains(check_at) WHERE check_at IS NOT NULL;

-- A periodic check writes check_at, checked_at and seen_at: what servers cache (which domains
-- are served, and their redirects) changes only with the columns below.
DROP TRIGGER IF EXISTS domains_changed;
CREATE TRIGGER domains_changed
    AFTER UPDATE OF host, account_id, verified_at, root_redirect, not_found_redirect ON domains BEGIN
    UPDATE data_changes SET version = version + 1;
END;
