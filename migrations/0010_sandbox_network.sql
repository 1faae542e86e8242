-- What a repository's sandboxes may reach on the network: 'none', 'allowlist' (only the
-- agent provider's API and the hosts listed here, one per line, through Handoff's
-- egress proxy) or 'open'. Repositories connected before get the allow-list.
ALTER TABLE repos ADD COLUMN network_mode TEXT NOT NULL DEFAULT 'allowlist'
    CHECK (network_mode IN ('none', 'allowlist', 'open'));
ALTER TABLE repos ADD COLUMN allowed_hosts TEXT NOT NULL DEFAULT '';
