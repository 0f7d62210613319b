-- name: 490-lists-and-imports
-- Lists (docs/audiences.md): named sets of people, filled by hand or from CSV imports.
CREATE TABLE lists (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lists_by_workspace ON lists (workspace_id, created_at DESC, id DESC);
-- A person deleted leaves every list with them.
CREATE TABLE list_members (
  list_id uuid NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
  person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
  added_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (list_id, person_id)
);
CREATE INDEX list_members_by_person ON list_members (person_id);
-- A CSV import is a job (store/job-queue.ts): waiting or running while rows remain, then done
-- or failed. Its file is staged on disk by the instance that received it (staged_on); each
-- page of rows commits with the byte offset of the next row, so a restart resumes there.
CREATE TABLE list_imports (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  list_id uuid NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
  state text NOT NULL CHECK (state IN ('waiting', 'running', 'done', 'failed')),
  file text NOT NULL,
  staged_on text NOT NULL,
  columns text[],
  byte_offset bigint NOT NULL DEFAULT 0,
  rows_read integer NOT NULL DEFAULT 0,
  rows_added integer NOT NULL DEFAULT 0,
  rows_failed integer NOT NULL DEFAULT 0,
  errors jsonb NOT NULL DEFAULT '[]',
  error text,
  due_at timestamptz NOT NULL DEFAULT now(),
  claims integer NOT NULL DEFAULT 0,
  claimed_by integer,
  claimed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX list_imports_due ON list_imports (workspace_id, due_at) WHERE state = 'waiting';
CREATE INDEX list_imports_by_list ON list_imports (list_id, created_at DESC);
-- A CSV row with an email and no external_id is the person with that address.
CREATE INDEX people_by_email ON people (workspace_id, lower(email)) WHERE email IS NOT NULL;
