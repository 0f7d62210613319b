-- name: 491-topics-and-subscriptions
-- Topics (docs/audiences.md): what a person may opt in to or out of, each with its default for
-- people who never chose. A person's choice is a row; no row means the topic's default.
CREATE TABLE topics (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  default_state text NOT NULL CHECK (default_state IN ('opted_in', 'opted_out')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX topics_by_workspace ON topics (workspace_id, created_at);
CREATE TABLE topic_subscriptions (
  topic_id uuid NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
  person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
  subscribed boolean NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (topic_id, person_id)
);
CREATE INDEX topic_subscriptions_by_person ON topic_subscriptions (person_id);
