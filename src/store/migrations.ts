import type { Db } from './db.js';

// Ordered, append-only. Each runs once, inside one transaction holding an advisory lock so
// that replicas starting together against one Postgres do not race.
const migrations: { id: number; name: string; sql: string }[] = [
  {
    id: 1,
    name: 'workspaces, members, api keys',
    sql: `
      CREATE TABLE workspaces (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        settings jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE workspace_members (
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        user_id text NOT NULL,
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, user_id)
      );
      CREATE INDEX workspace_members_by_user ON workspace_members (user_id);
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        key_prefix text NOT NULL UNIQUE,
        secret_hash text NOT NULL,
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        permissions jsonb NOT NULL,
        key_type text NOT NULL CHECK (key_type IN ('secret', 'public')),
        environment text NOT NULL CHECK (environment IN ('live', 'test')),
        expires_at timestamptz,
        ip_whitelist jsonb NOT NULL DEFAULT '[]',
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id) WHERE revoked_at IS NULL;
      CREATE TABLE api_key_usage (
        key_id uuid NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
        day date NOT NULL,
        route text NOT NULL,
        requests bigint NOT NULL,
        PRIMARY KEY (key_id, day, route)
      );
    `,
  },
  {
    id: 2,
    name: 'people and devices',
    sql: `
      CREATE TABLE people (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        external_id text NOT NULL,
        email text,
        phone text,
        first_name text,
        last_name text,
        avatar_url text,
        timezone text,
        locale text,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'unsubscribed', 'bounced', 'suppressed')),
        unsubscribed_at timestamptz,
        unsubscribe_reason text,
        traits jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (workspace_id, external_id)
      );
      CREATE INDEX people_by_created ON people (workspace_id, created_at, id);
      CREATE TABLE devices (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
        device_token text NOT NULL,
        platform text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
        device_name text,
        device_model text,
        os_version text,
        app_version text,
        is_active boolean NOT NULL DEFAULT true,
        is_valid boolean NOT NULL DEFAULT true,
        last_used_at timestamptz NOT NULL DEFAULT now(),
        registration_count integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (workspace_id, device_token)
      );
      CREATE INDEX devices_by_person ON devices (person_id, last_used_at DESC, created_at DESC);
      -- Anonymous merges still to run (README, Request bodies): written with the identify that asks for
      -- one, removed when done, so a merge survives a restart.
      CREATE TABLE pending_merges (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        person_id uuid NOT NULL,
        anonymous_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    id: 3,
    name: 'event log, events, counts, embedded analytics',
    sql: `
      -- The embedded Log: one row per append (a request's events), acknowledged once committed;
      -- the sink deletes the rows it has written onward, in the same statement.
      CREATE TABLE log_entries (
        seq bigserial PRIMARY KEY,
        topic text NOT NULL,
        payload jsonb NOT NULL,
        appended_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE events (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
        type text NOT NULL,
        parameters jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL,
        ingested_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX events_by_person ON events (person_id, created_at DESC, id DESC);
      CREATE INDEX events_by_type ON events (workspace_id, type, created_at DESC, id DESC);
      -- Per-person event counts, for campaign conditions (performed_count_*, first_occurrence).
      CREATE TABLE person_event_counts (
        person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
        type text NOT NULL,
        count bigint NOT NULL,
        first_at timestamptz NOT NULL,
        last_at timestamptz NOT NULL,
        PRIMARY KEY (person_id, type)
      );
      -- Where a merged-away person's events go when they reach the sink after the merge.
      CREATE TABLE person_redirects (
        from_id uuid PRIMARY KEY,
        to_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      -- The embedded analytics store: every event, kept when its person is deleted.
      CREATE TABLE analytics_events (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL,
        person_id uuid NOT NULL,
        external_id text NOT NULL,
        type text NOT NULL,
        parameters jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        ingested_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX analytics_events_by_type ON analytics_events (workspace_id, type, created_at);
    `,
  },
  {
    id: 4,
    name: 'dead letters',
    sql: `
      -- What a sink could not apply for a reason other than an outage (a value PostgreSQL or
      -- ClickHouse refuses), set aside so that everything else on the Log flows
      -- (eventlog/event-sink.ts). ref says where it was on the Log ('log_entries:<seq>:<i>',
      -- '<stream>:<stream seq>:<i>'; no ':<i>' when the whole entry or message was unreadable),
      -- unique per sink, so a poison redelivered after a crash is recorded once.
      CREATE TABLE dead_letters (
        id bigserial PRIMARY KEY,
        sink text NOT NULL,
        ref text NOT NULL,
        workspace_id uuid,
        payload text NOT NULL,
        error text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (sink, ref)
      );
    `,
  },
  {
    id: 5,
    name: 'device tokens unique by their md5',
    sql: `
      -- A device token may be 4,096 characters (README, Routes), more than a btree index entry
      -- holds (2,704 bytes) when it does not compress: tokens are unique in a workspace by
      -- their md5 instead. Only a workspace's own tokens could collide, never another's.
      ALTER TABLE devices DROP CONSTRAINT devices_workspace_id_device_token_key;
      CREATE UNIQUE INDEX devices_by_token ON devices (workspace_id, md5(device_token));
    `,
  },
  {
    id: 6,
    name: 'push records, deliveries, token suppressions, channel credentials',
    sql: `
      -- One row per send request that reached a decision worth keeping (README, Request bodies and Routes):
      -- sent, failed, policy_suppressed, and scheduled sends (docs/channels.md) from their 202 on.
      -- A scheduled row keeps the unrendered content and variables: it is rendered at send time.
      -- 'sending' marks a scheduled send claimed by one actor, so that it is sent once.
      CREATE TABLE push_messages (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
        external_id text NOT NULL,
        status text NOT NULL CHECK (status IN ('scheduled', 'sending', 'sent', 'failed', 'policy_suppressed', 'skipped')),
        platform text,
        provider text NOT NULL,
        provider_id text,
        skip_reason text,
        error text,
        title text,
        body text,
        image_url text,
        action_url text,
        custom_data jsonb,
        variables jsonb,
        tags jsonb,
        campaign_id text,
        event_id text,
        scheduled_at timestamptz,
        claimed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        sent_at timestamptz
      );
      CREATE INDEX push_messages_by_person ON push_messages (person_id, created_at DESC);
      -- The send counters are rebuilt from these (the send policy's caps count 'sent').
      CREATE INDEX push_messages_sent ON push_messages (person_id, sent_at) WHERE status = 'sent';
      CREATE INDEX push_messages_due ON push_messages (scheduled_at) WHERE status IN ('scheduled', 'sending');
      CREATE TABLE push_deliveries (
        message_id uuid NOT NULL REFERENCES push_messages(id) ON DELETE CASCADE,
        device_id uuid NOT NULL,
        device_token text NOT NULL,
        platform text NOT NULL,
        status text NOT NULL CHECK (status IN ('sent', 'failed')),
        provider_id text,
        error text,
        PRIMARY KEY (message_id, device_id)
      );
      -- A token is suppressed once per type; tokens are matched by md5
      -- for the same reason as devices (migration 5).
      CREATE TABLE token_suppressions (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        device_token text NOT NULL,
        platform text NOT NULL,
        suppression_type text NOT NULL CHECK (suppression_type IN ('uninstalled', 'disabled', 'invalid_token', 'opt_out')),
        reason text,
        source_push_id uuid,
        source_campaign_id uuid,
        suppressed_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX token_suppressions_by_type ON token_suppressions (workspace_id, md5(device_token), suppression_type);
      -- Provider credentials (docs/channels.md), each sealed with AES-256-GCM under HERALD_SECRETS_KEY.
      CREATE TABLE push_channels (
        workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
        fcm bytea,
        apns bytea,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    id: 7,
    name: 'campaigns, message templates, campaign enrolments',
    sql: `
      -- Message templates: push content that campaign nodes name by template_id.
      CREATE TABLE message_templates (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        name text NOT NULL,
        channel text NOT NULL CHECK (channel IN ('push')),
        title text,
        body text,
        image_url text,
        action_url text,
        custom_data jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX message_templates_by_workspace ON message_templates (workspace_id, created_at DESC, id DESC);
      -- Campaigns (docs/campaigns-runtime.md). trigger_config, audience_config and workflow_definition are
      -- kept as written (validated for activation by domain/campaigns.ts). template_id is the
      -- one the campaign was created with, as given: push nodes name theirs in the workflow, and
      -- a template deleted since is reported by activation. No foreign key, so deleting a
      -- template never locks campaign rows (which a campaign going live holds while it reads
      -- its templates).
      CREATE TABLE campaigns (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        name text NOT NULL,
        status text NOT NULL CHECK (status IN ('draft', 'scheduled', 'active', 'paused', 'completed', 'archived', 'failed')),
        trigger_type text NOT NULL CHECK (trigger_type IN ('event', 'webhook', 'schedule', 'dynamic_schedule')),
        trigger_config jsonb NOT NULL,
        audience_config jsonb NOT NULL DEFAULT '{}',
        workflow_definition jsonb NOT NULL DEFAULT '{"nodes": []}',
        template_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX campaigns_by_workspace ON campaigns (workspace_id, created_at DESC, id DESC);
      -- The campaigns that can send (what trigger indexes and schedulers load).
      CREATE INDEX campaigns_live ON campaigns (workspace_id, trigger_type) WHERE status IN ('active', 'scheduled');
      -- One row per entry of a person into a campaign; the campaign's stats count them, and
      -- they go with the campaign. The unique keys are what concurrent triggers, replicas and
      -- redeliveries insert against (ON CONFLICT DO NOTHING): run_id names what enrolled the
      -- person (the event id, the webhook trigger, the schedule run), so one run enrols a
      -- person once; entry is the person's nth entry into the campaign, so max_per_user (and
      -- first_occurrence, max 1) is a bound on entry that no race can exceed.
      CREATE TABLE campaign_enrolments (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        campaign_id uuid NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
        run_id text NOT NULL,
        entry integer NOT NULL CHECK (entry >= 1),
        enrolled_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (campaign_id, run_id, person_id),
        UNIQUE (campaign_id, person_id, entry)
      );
      CREATE INDEX campaign_enrolments_by_time ON campaign_enrolments (campaign_id, enrolled_at);
      -- Campaign stats count a campaign's push records by status.
      CREATE INDEX push_messages_by_campaign ON push_messages (workspace_id, campaign_id, status) WHERE campaign_id IS NOT NULL;
    `,
  },
  {
    id: 8,
    name: 'campaign runtime: enrolment progress, schedule runs',
    sql: `
      -- Where each enrolment is in its workflow (campaigns/executor.ts): 'waiting' until due_at,
      -- then next_node (a node id of workflow_definition; null: the first) runs; 'running' while
      -- an executor holds it (claimed_at, refreshed while it works, goes stale when its process
      -- died); 'done' after the last node; 'stopped' when its campaign was archived or failed,
      -- or the node is gone. claims counts the claims at the current node: more than one means
      -- a claim was interrupted there. context holds what templates read besides the person:
      -- {event, trigger, variables}. Rows are updated in place two or three times each, so
      -- pages keep room for the new versions (fillfactor) and claimed_at is in no index: the
      -- heartbeat's updates stay HOT.
      ALTER TABLE campaign_enrolments
        ADD COLUMN state text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'running', 'done', 'stopped')),
        ADD COLUMN next_node text,
        ADD COLUMN due_at timestamptz NOT NULL DEFAULT now(),
        ADD COLUMN context jsonb NOT NULL DEFAULT '{}',
        ADD COLUMN claimed_at timestamptz,
        ADD COLUMN claims integer NOT NULL DEFAULT 0;
      ALTER TABLE campaign_enrolments SET (fillfactor = 70);
      -- A third of an enrolment's insert was its three foreign-key checks: the workspace's is
      -- implied by the campaign's (a workspace's deletion cascades through its campaigns).
      ALTER TABLE campaign_enrolments DROP CONSTRAINT campaign_enrolments_workspace_id_fkey;
      CREATE INDEX campaign_enrolments_due ON campaign_enrolments (workspace_id, due_at) WHERE state = 'waiting';
      CREATE INDEX campaign_enrolments_running ON campaign_enrolments (workspace_id) WHERE state = 'running';
      -- One row per schedule run (campaigns/schedules.ts): its key (the send_at, the cron tick, the
      -- dynamic date) is unique per campaign, so a run is started once whatever the number of
      -- replicas; claimed_at is the lease of the process enrolling its audience (refreshed while it
      -- works), after_person how far that walk got, so a run a crash interrupted resumes there.
      CREATE TABLE campaign_runs (
        campaign_id uuid NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        run_key text NOT NULL,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        state text NOT NULL CHECK (state IN ('enrolling', 'enrolled', 'failed')),
        after_person uuid,
        enrolled integer NOT NULL DEFAULT 0,
        truncated boolean NOT NULL DEFAULT false,
        error text,
        claimed_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        PRIMARY KEY (campaign_id, run_key)
      );
      CREATE INDEX campaign_runs_enrolling ON campaign_runs (claimed_at) WHERE state = 'enrolling';
      -- When the campaign last went live (draft or paused → active or scheduled): cron ticks
      -- and dynamic dates before it are not run.
      ALTER TABLE campaigns ADD COLUMN live_since timestamptz;
      UPDATE campaigns SET live_since = updated_at WHERE status IN ('active', 'scheduled');
      -- A trait's ISO 8601 date or date-time (no offset: UTC) as an instant, NULL when it is
      -- not one, for dynamic_schedule campaigns. Lenient rather than failing the statement: an
      -- impossible day rolls over (2024-02-30 is 2024-03-01), as no exception can be caught in
      -- a plain (inlinable) SQL function.
      CREATE FUNCTION herald_instant(s text) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
        SELECT CASE WHEN m IS NULL THEN NULL ELSE
          (timestamp '2000-01-01' + make_interval(years => m[1]::int - 2000, months => m[2]::int - 1, days => m[3]::int - 1,
             hours => COALESCE(m[4]::int, 0), mins => COALESCE(m[5]::int, 0), secs => COALESCE(m[6]::double precision, 0))) AT TIME ZONE 'UTC'
          - CASE WHEN m[8] IS NULL THEN interval '0'
                 ELSE (CASE WHEN m[8] = '-' THEN -1 ELSE 1 END) * make_interval(hours => m[9]::int, mins => COALESCE(m[10]::int, 0)) END
        END
        FROM (SELECT regexp_match(s, '^(\\d{4})-(\\d{2})-(\\d{2})(?:[T ](\\d{2}):(\\d{2})(?::(\\d{2}(?:\\.\\d{1,6})?))?)?(Z|([+-])(\\d{2}):?(\\d{2})?)?$') AS m) x
      $f$;
      -- Audiences are read in keyset pages of person ids within a workspace.
      CREATE INDEX people_by_workspace_id ON people (workspace_id, id);
    `,
  },
  {
    id: 9,
    name: 'webhook trigger idempotency claims',
    sql: `
      -- An Idempotency-Key claimed by a trigger, per workspace and campaign, on the
      -- embedded default (with NATS_URL the claims live in NATS KV instead). people_queued is
      -- null while the trigger is in progress. A row past expires_at counts as absent (a claim
      -- replaces it) and is purged. campaign_id has no foreign key: the claim is only a memory
      -- of the key, and a key check must never wait on a lock of the campaign row.
      CREATE TABLE trigger_claims (
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        campaign_id uuid NOT NULL,
        idempotency_key text NOT NULL,
        fingerprint text NOT NULL,
        trigger_id uuid NOT NULL,
        triggered_at timestamptz NOT NULL,
        claim_token uuid NOT NULL,
        claimed_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        people_queued integer,
        audience_truncated boolean,
        PRIMARY KEY (workspace_id, campaign_id, idempotency_key)
      );
      CREATE INDEX trigger_claims_expiry ON trigger_claims (expires_at);
    `,
  },
  {
    id: 10,
    name: 'first-seen event of a person',
    sql: `
      -- first_occurrence (README, Request bodies): the event that first made a person's count of a type,
      -- in Log order. Set once, by whichever comes first: the sink creating the row, or an
      -- event trigger claiming it (a row of count 0 the sink then adds to). Rows from before
      -- this migration have none: those people had been seen already.
      ALTER TABLE person_event_counts ADD COLUMN first_event_id uuid;
    `,
  },
  {
    id: 11,
    name: 'no index on the embedded analytics copy by type',
    sql: `
      -- No query reads analytics_events by type (the analytics routes answer 501), and the
      -- sink paid for this index on every event it stored. The primary key stays: it makes a
      -- batch applied twice harmless.
      DROP INDEX analytics_events_by_type;
    `,
  },
  {
    id: 12,
    name: 'events applied at the append: the log_entries queue goes',
    sql: `
      -- The store's Log now writes events where they are read when it appends them
      -- (eventlog/event-log.ts). What an earlier version queued in log_entries and had not
      -- applied yet (it was stopped with kill -9 before its sink caught up) is applied here as
      -- that sink did (a frozen copy of its statement), one record at a time; a record the store
      -- refuses, or an entry that is not a list, goes to dead_letters (sink 'store-log').
      DO $$
      DECLARE
        e record;
        r record;
      BEGIN
        FOR e IN SELECT seq, payload FROM log_entries WHERE topic = 'events' ORDER BY seq LOOP
          IF jsonb_typeof(e.payload) <> 'array' THEN
            INSERT INTO dead_letters (sink, ref, payload, error)
            VALUES ('store-log', 'log_entries:' || e.seq, e.payload::text, 'not an array of event records')
            ON CONFLICT (sink, ref) DO NOTHING;
            CONTINUE;
          END IF;
          FOR r IN SELECT x, o FROM jsonb_array_elements(e.payload) WITH ORDINALITY AS t(x, o) LOOP
            BEGIN
              WITH recs AS (
                SELECT * FROM jsonb_to_recordset(jsonb_build_array(r.x)) AS t(id uuid, workspace_id uuid, person_id uuid, external_id text, type text, parameters jsonb, created_at timestamptz)
              ), resolved AS (
                SELECT recs.id, recs.workspace_id, recs.type, recs.parameters, recs.created_at,
                  (SELECT p.id FROM people p WHERE p.id = COALESCE((SELECT rd.to_id FROM person_redirects rd WHERE rd.from_id = recs.person_id), recs.person_id)) AS person_id
                FROM recs
              ), stored AS (
                INSERT INTO events (id, workspace_id, person_id, type, parameters, created_at)
                SELECT id, workspace_id, person_id, type, parameters, created_at FROM resolved WHERE person_id IS NOT NULL
                ON CONFLICT (id) DO NOTHING
                RETURNING id, person_id, type, created_at
              ), counted AS (
                INSERT INTO person_event_counts (person_id, type, count, first_at, last_at, first_event_id)
                SELECT person_id, type, 1, created_at, created_at, id FROM stored
                ON CONFLICT (person_id, type) DO UPDATE SET count = person_event_counts.count + 1,
                  first_at = LEAST(person_event_counts.first_at, EXCLUDED.first_at), last_at = GREATEST(person_event_counts.last_at, EXCLUDED.last_at)
              )
              INSERT INTO analytics_events (id, workspace_id, person_id, external_id, type, parameters, created_at)
              SELECT id, workspace_id, person_id, external_id, type, parameters, created_at FROM recs
              ON CONFLICT (id) DO NOTHING;
            EXCEPTION WHEN data_exception OR integrity_constraint_violation OR cardinality_violation OR program_limit_exceeded THEN
              INSERT INTO dead_letters (sink, ref, workspace_id, payload, error)
              VALUES ('store-log', 'log_entries:' || e.seq || ':' || (r.o - 1),
                CASE WHEN r.x->>'workspace_id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN (r.x->>'workspace_id')::uuid END,
                r.x::text, SQLERRM || ' (SQLSTATE ' || SQLSTATE || ')')
              ON CONFLICT (sink, ref) DO NOTHING;
            END;
          END LOOP;
        END LOOP;
      END $$;
      DROP TABLE log_entries;
    `,
  },
  {
    id: 13,
    name: 'no workspace foreign keys on the tables every ingest writes',
    sql: `
      -- Each of these ran a lookup of the workspace's row for every row inserted, and every
      -- transaction that inserted (the Log's group commit, the person resolver, the device
      -- registrar: several at once on one workspace) took a KEY SHARE lock on that one row,
      -- rewriting it, a multixact when two held it, and queued on its page. Workspaces are
      -- never deleted and the workspace id written comes from the authenticated key, so the
      -- checks guarded nothing, and their cascade never ran. The person foreign keys stay: a
      -- person's delete cascades, and must not race an event written for them.
      ALTER TABLE events DROP CONSTRAINT events_workspace_id_fkey;
      ALTER TABLE people DROP CONSTRAINT people_workspace_id_fkey;
      ALTER TABLE devices DROP CONSTRAINT devices_workspace_id_fkey;
      ALTER TABLE push_messages DROP CONSTRAINT push_messages_workspace_id_fkey;
    `,
  },
  {
    id: 14,
    name: 'the embedded analytics store: events, and analytics_events for deleted people only',
    sql: `
      -- Every event was written twice: to events, and a copy to analytics_events that nothing
      -- read, so that it outlived its person's delete. The delete now moves a person's events
      -- to analytics_events (store/people.ts), so the copies of the living go. Together the two
      -- tables are the analytics store without ClickHouse, each event in exactly one of them.
      DELETE FROM analytics_events a USING events e WHERE a.id = e.id;
      CREATE VIEW embedded_analytics_events AS
        SELECT e.id, e.workspace_id, e.person_id, p.external_id, e.type, e.parameters, e.created_at, e.ingested_at
        FROM events e JOIN people p ON p.id = e.person_id
        UNION ALL
        SELECT id, workspace_id, person_id, external_id, type, parameters, created_at, ingested_at FROM analytics_events;
    `,
  },
  {
    id: 100,
    name: 'claims name their holder: instance numbers (store/leases.ts)',
    sql: `
      -- An actor thread holds an instance number for its life and an advisory lock on it; a
      -- claim whose holder's lock is gone lapses at once, without waiting for its stale time.
      CREATE SEQUENCE herald_instances AS integer CYCLE;
      ALTER TABLE campaign_enrolments ADD COLUMN claimed_by integer;
      ALTER TABLE push_messages ADD COLUMN claimed_by integer;
      ALTER TABLE campaign_runs ADD COLUMN claimed_by integer;
    `,
  },
  {
    id: 200,
    name: 'email and SMS channels, address suppressions',
    sql: `
      -- Email and SMS (docs/channels.md): each channel's settings as JSON sealed with AES-256-GCM under
      -- HERALD_SECRETS_KEY (as push_channels), null when the channel is not configured.
      CREATE TABLE message_channels (
        workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
        email bytea,
        sms bytea,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- An email address (lower case) or an E.164 number, suppressed once per type.
      CREATE TABLE address_suppressions (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        channel text NOT NULL CHECK (channel IN ('email', 'sms')),
        address text NOT NULL,
        suppression_type text NOT NULL CHECK (suppression_type IN ('hard_bounce', 'complaint', 'invalid_address', 'opt_out', 'manual')),
        reason text,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX address_suppressions_by_type ON address_suppressions (workspace_id, channel, address, suppression_type);
      CREATE INDEX address_suppressions_newest ON address_suppressions (workspace_id, created_at DESC, id);
    `,
  },
  {
    id: 201,
    name: 'messages on every channel: channel, address, delivery statuses, events',
    sql: `
      -- Email and SMS: push records become messages with a channel; email and SMS add the
      -- statuses their callbacks report, the address sent to and the provider events applied.
      ALTER TABLE push_messages ADD COLUMN channel text NOT NULL DEFAULT 'push' CHECK (channel IN ('push', 'email', 'sms'));
      ALTER TABLE push_messages ADD COLUMN address text;
      ALTER TABLE push_messages ADD COLUMN events jsonb NOT NULL DEFAULT '[]';
      ALTER TABLE push_messages DROP CONSTRAINT push_messages_status_check;
      ALTER TABLE push_messages ADD CONSTRAINT push_messages_status_check
        CHECK (status IN ('scheduled', 'sending', 'sent', 'failed', 'policy_suppressed', 'skipped', 'delivered', 'bounced', 'complained'));
    `,
  },
  {
    id: 202,
    name: 'provider events applied',
    sql: `
      -- Provider callbacks: a provider event seen before (its own id) is applied once.
      CREATE TABLE provider_events (
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        provider text NOT NULL,
        event_id text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, provider, event_id)
      );
    `,
  },
  {
    id: 203,
    name: 'email and SMS templates',
    sql: `
      -- Templates per channel; email's fields beside push's (sms uses body).
      ALTER TABLE message_templates DROP CONSTRAINT message_templates_channel_check;
      ALTER TABLE message_templates ADD CONSTRAINT message_templates_channel_check CHECK (channel IN ('push', 'email', 'sms'));
      ALTER TABLE message_templates ADD COLUMN subject text, ADD COLUMN html text, ADD COLUMN text text, ADD COLUMN preheader text;
    `,
  },
  {
    id: 204,
    name: 'people by phone number',
    sql: `
      -- An inbound SMS (handlers/provider-callbacks.ts) finds its person by number: people keep
      -- their phone as they gave it, so store/people.ts personByPhone compares the phone with its
      -- punctuation removed, exactly this expression (PHONE_DIGITS there), to the number's
      -- spellings. Without this index that is a scan of the workspace's people per message.
      CREATE INDEX IF NOT EXISTS people_phone_digits ON people (workspace_id, regexp_replace(phone, '[^0-9+]', '', 'g')) WHERE phone IS NOT NULL;
      `,
    },
    {
    id: 205,
    name: 'email and SMS messages by provider id',
    sql: `
      -- A Twilio status callback names its message by MessageSid, stored as provider_id
      -- (messaging/provider-events.ts): without this index each callback scans the workspace's
      -- messages, one scan per text of a 50,000-person SMS campaign.
      CREATE INDEX IF NOT EXISTS messages_by_provider_id ON push_messages (workspace_id, provider_id) WHERE channel IN ('email', 'sms');
    `,
  },
  {
    id: 400,
    name: "the event debugger's index",
    sql: `
      -- GET /workspaces/{id}/events (store/events.ts latestEvents): a workspace's latest events
      -- whatever their type, newest first. events_by_type leads with type, so without this the
      -- debugger sorts every event of the workspace. The store's events table is read in both
      -- modes (ClickHouse gets a copy), so one index serves both.
      CREATE INDEX IF NOT EXISTS events_by_workspace_time ON events (workspace_id, created_at DESC, id DESC);
    `,
  },
  {
    id: 401,
    name: "the suppression lists' search by prefix",
    sql: `
      -- The dashboard's search of its suppression lists (\`q\`, store/suppressions.ts and
      -- store/address-suppressions.ts): a range of the workspace's tokens or addresses in byte
      -- order (COLLATE "C", whatever the database's collation). A token's first 64 characters
      -- only, as tokens may be longer than an index entry takes; the whole token is then checked.
      CREATE INDEX IF NOT EXISTS token_suppressions_by_prefix ON token_suppressions (workspace_id, (left(device_token, 64) COLLATE "C"));
      CREATE INDEX IF NOT EXISTS address_suppressions_by_prefix ON address_suppressions (workspace_id, (address COLLATE "C"));
    `,
  },
  {
    id: 410,
    name: "a campaign's messages, newest first",
    sql: `
      -- GET /workspaces/{id}/campaigns/{campaignId}/messages (store/push-messages.ts
      -- campaignMessages): the dashboard's live progress pages back through a campaign's
      -- messages newest first; push_messages_by_campaign is by status, so without this every
      -- message of the campaign would be sorted.
      CREATE INDEX IF NOT EXISTS push_messages_by_campaign_time ON push_messages (workspace_id, campaign_id, created_at DESC, id DESC) WHERE campaign_id IS NOT NULL;
    `,
  },
  {
    id: 420,
    name: 'one job mechanism: runs, enrolments and scheduled sends (store/job-queue.ts)',
    sql: `
      -- util/shard.ts shardOf in SQL, so that a claim names the workspaces its actor serves:
      -- FNV-1a over the key's characters (a workspace id's are ASCII), modulo n.
      CREATE OR REPLACE FUNCTION herald_shard(key text, n integer) RETURNS integer
        LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
      DECLARE h bigint := 2166136261;
      BEGIN
        FOR i IN 1 .. length(key) LOOP
          h := ((h # ascii(substr(key, i, 1))) * 16777619) % 4294967296;
        END LOOP;
        RETURN (h % n)::integer;
      END $fn$;
      -- A run is a job like the others: an id, waiting (due) or running (claimed), its claims
      -- counted for the back-off; it walks a page per claim and waits again between pages.
      ALTER TABLE campaign_runs ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
        ADD COLUMN due_at timestamptz NOT NULL DEFAULT now(),
        ADD COLUMN claims integer NOT NULL DEFAULT 0,
        ALTER COLUMN claimed_at DROP NOT NULL,
        ALTER COLUMN claimed_at DROP DEFAULT,
        DROP CONSTRAINT campaign_runs_state_check;
      UPDATE campaign_runs SET state = 'running' WHERE state = 'enrolling';
      ALTER TABLE campaign_runs ADD CONSTRAINT campaign_runs_state_check CHECK (state IN ('waiting', 'running', 'enrolled', 'failed'));
      DROP INDEX campaign_runs_enrolling;
      CREATE INDEX campaign_runs_due ON campaign_runs (workspace_id, due_at) WHERE state = 'waiting';
      CREATE INDEX campaign_runs_running ON campaign_runs (workspace_id) WHERE state = 'running';
      -- The scheduled sends' workspaces are found and claimed by workspace, as the other jobs'.
      CREATE INDEX push_messages_waiting ON push_messages (workspace_id, scheduled_at) WHERE status = 'scheduled';
    `,
  },
  {
    id: 430,
    name: "provider callbacks: a message's events capped, Mailgun's tokens remembered",
    sql: `
      -- A message keeps its first 1,000 provider events (messaging/provider-events.ts); the
      -- others still apply and are counted here.
      ALTER TABLE push_messages ADD COLUMN events_not_stored integer NOT NULL DEFAULT 0;
      -- Mailgun signs a timestamp and a token, not the event: a token is accepted once
      -- (store/callback-tokens.ts), and kept while its timestamp could still be accepted.
      CREATE TABLE callback_tokens (
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        token text NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (workspace_id, token)
      );
      CREATE INDEX callback_tokens_expiry ON callback_tokens (workspace_id, expires_at);
    `,
  },
  {
    id: 440,
    name: 'push_messages becomes messages',
    sql: `
      -- The table has held every channel's messages since migration 201: it takes their name,
      -- every row and id kept, and so do its indexes and constraints.
      ALTER TABLE push_messages RENAME TO messages;
      ALTER INDEX push_messages_pkey RENAME TO messages_pkey;
      ALTER INDEX push_messages_by_person RENAME TO messages_by_person;
      ALTER INDEX push_messages_sent RENAME TO messages_sent;
      ALTER INDEX push_messages_due RENAME TO messages_due;
      ALTER INDEX push_messages_by_campaign RENAME TO messages_by_campaign;
      ALTER INDEX push_messages_by_campaign_time RENAME TO messages_by_campaign_time;
      ALTER INDEX push_messages_waiting RENAME TO messages_waiting;
      ALTER TABLE messages RENAME CONSTRAINT push_messages_person_id_fkey TO messages_person_id_fkey;
      ALTER TABLE messages RENAME CONSTRAINT push_messages_status_check TO messages_status_check;
      ALTER TABLE messages RENAME CONSTRAINT push_messages_channel_check TO messages_channel_check;
    `,
  },
  {
    id: 441,
    name: 'message counters per campaign, kept by the writing statements',
    sql: `
      -- Campaign stats and the campaign list (store/channel-stats.ts) read these rather than
      -- count every message of the campaign on each read: per campaign, channel and status, the
      -- messages, and those of them with an open or a click event. The dashboard's test sends
      -- (tagged test) do not count. A statement writing messages adds its rows' changes (its
      -- transition tables: new rows counted in, old rows out) in one upsert, whoever wrote.
      -- Each backend adds to rows of its own (slot: its pid; 0 the backfill), so concurrent pages
      -- of one campaign neither wait on each other's counter rows nor deadlock over them; a
      -- read sums the slots.
      CREATE TABLE message_counters (
        workspace_id uuid NOT NULL,
        campaign_id text NOT NULL,
        channel text NOT NULL,
        status text NOT NULL,
        slot integer NOT NULL,
        messages bigint NOT NULL,
        opened bigint NOT NULL,
        clicked bigint NOT NULL,
        PRIMARY KEY (workspace_id, campaign_id, channel, status, slot)
      );
      CREATE FUNCTION herald_counted_messages(rows_of text, sign integer) RETURNS text
        LANGUAGE sql IMMUTABLE AS $fn$
        SELECT format($q$SELECT workspace_id, campaign_id, channel, status, %s AS n,
                             (events @> '[{"type":"opened"}]')::int AS opened, (events @> '[{"type":"clicked"}]')::int AS clicked
                          FROM %I WHERE campaign_id IS NOT NULL AND NOT COALESCE(tags @> '["test"]'::jsonb, false)$q$, sign, rows_of)
      $fn$;
      CREATE FUNCTION herald_count_messages() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        campaigns boolean := false;
      BEGIN
        -- An insert has only new rows, a delete only old ones. A statement with no campaign's
        -- message (a single send, a lease renewal) stops at these cached probes: the statement
        -- below is planned at each run (0.3 ms).
        IF TG_OP <> 'DELETE' THEN
          campaigns := EXISTS (SELECT 1 FROM new_rows WHERE campaign_id IS NOT NULL);
        END IF;
        IF TG_OP <> 'INSERT' AND NOT campaigns THEN
          campaigns := EXISTS (SELECT 1 FROM old_rows WHERE campaign_id IS NOT NULL);
        END IF;
        IF NOT campaigns THEN
          RETURN NULL;
        END IF;
        EXECUTE format($q$
          INSERT INTO message_counters AS c (workspace_id, campaign_id, channel, status, slot, messages, opened, clicked)
          SELECT workspace_id, campaign_id, channel, status, pg_backend_pid(), sum(n), sum(n * opened), sum(n * clicked)
          FROM (%s) d GROUP BY workspace_id, campaign_id, channel, status
          HAVING sum(n) <> 0 OR sum(n * opened) <> 0 OR sum(n * clicked) <> 0
          ON CONFLICT (workspace_id, campaign_id, channel, status, slot) DO UPDATE
            SET messages = c.messages + excluded.messages, opened = c.opened + excluded.opened, clicked = c.clicked + excluded.clicked$q$,
          CASE TG_OP
            WHEN 'INSERT' THEN herald_counted_messages('new_rows', 1)
            WHEN 'DELETE' THEN herald_counted_messages('old_rows', -1)
            ELSE herald_counted_messages('new_rows', 1) || ' UNION ALL ' || herald_counted_messages('old_rows', -1)
          END);
        RETURN NULL;
      END $fn$;
      CREATE TRIGGER messages_counted_in AFTER INSERT ON messages REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION herald_count_messages();
      CREATE TRIGGER messages_counted_again AFTER UPDATE ON messages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION herald_count_messages();
      CREATE TRIGGER messages_counted_out AFTER DELETE ON messages REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION herald_count_messages();
      -- The stats were the only reader of messages_by_campaign (by status): a campaign's
      -- messages are read along messages_by_campaign_time, so one index fewer to write per message.
      DROP INDEX messages_by_campaign;
      -- The messages written before (the triggers' lock on the table holds writers back until this commits).
      DO $do$ BEGIN
        EXECUTE format('INSERT INTO message_counters SELECT workspace_id, campaign_id, channel, status, 0, sum(n), sum(n * opened), sum(n * clicked)
                        FROM (%s) d GROUP BY workspace_id, campaign_id, channel, status', herald_counted_messages('messages', 1));
      END $do$;
    `,
  },
];

export async function migrate(db: Db): Promise<number> {
  return db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock(4242001)');
    await q.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await q.query<{ id: number }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id));
    let applied = 0;
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await q.exec(m.sql);
      await q.query('INSERT INTO schema_migrations (id, name) VALUES ($1, $2)', [m.id, m.name]);
      applied++;
    }
    return applied;
  });
}
