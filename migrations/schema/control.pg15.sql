--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: hearth; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA hearth;


ALTER SCHEMA hearth OWNER TO postgres;

--
-- Name: platform; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA platform;


ALTER SCHEMA platform OWNER TO postgres;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: migrations; Type: TABLE; Schema: hearth; Owner: postgres
--

CREATE TABLE hearth.migrations (
    id text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE hearth.migrations OWNER TO postgres;

--
-- Name: accounts; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.accounts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    password_hash text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE platform.accounts OWNER TO postgres;

--
-- Name: api_keys; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.api_keys (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    name text NOT NULL,
    type text NOT NULL,
    key_hash bytea NOT NULL,
    key_sealed text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    description text,
    CONSTRAINT api_keys_type_check CHECK ((type = ANY (ARRAY['publishable'::text, 'secret'::text])))
);


ALTER TABLE platform.api_keys OWNER TO postgres;

--
-- Name: config_audit; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.config_audit (
    id bigint NOT NULL,
    project_id uuid NOT NULL,
    area text NOT NULL,
    account_id uuid,
    changes jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE platform.config_audit OWNER TO postgres;

--
-- Name: config_audit_id_seq; Type: SEQUENCE; Schema: platform; Owner: postgres
--

CREATE SEQUENCE platform.config_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE platform.config_audit_id_seq OWNER TO postgres;

--
-- Name: config_audit_id_seq; Type: SEQUENCE OWNED BY; Schema: platform; Owner: postgres
--

ALTER SEQUENCE platform.config_audit_id_seq OWNED BY platform.config_audit.id;


--
-- Name: cron_fires; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.cron_fires (
    job_id uuid NOT NULL,
    minute timestamp with time zone NOT NULL,
    started_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone,
    status text DEFAULT 'running'::text NOT NULL,
    http_status integer,
    result jsonb,
    error text,
    CONSTRAINT cron_fires_status_check CHECK ((status = ANY (ARRAY['running'::text, 'succeeded'::text, 'failed'::text])))
);


ALTER TABLE platform.cron_fires OWNER TO postgres;

--
-- Name: cron_jobs; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.cron_jobs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    name text NOT NULL,
    schedule text NOT NULL,
    target_kind text NOT NULL,
    target text NOT NULL,
    payload jsonb NOT NULL,
    secret_sealed text,
    created_at timestamp with time zone NOT NULL,
    last_minute timestamp with time zone,
    last_finished_at timestamp with time zone,
    last_status text,
    last_http_status integer,
    last_error text,
    CONSTRAINT cron_jobs_check CHECK (((secret_sealed IS NOT NULL) = (target_kind = 'webhook'::text))),
    CONSTRAINT cron_jobs_last_status_check CHECK ((last_status = ANY (ARRAY['succeeded'::text, 'failed'::text]))),
    CONSTRAINT cron_jobs_name_check CHECK ((name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'::text)),
    CONSTRAINT cron_jobs_target_kind_check CHECK ((target_kind = ANY (ARRAY['enqueue'::text, 'webhook'::text, 'workflow'::text])))
);


ALTER TABLE platform.cron_jobs OWNER TO postgres;

--
-- Name: function_logs; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.function_logs (
    id bigint NOT NULL,
    project_id uuid NOT NULL,
    function_name text NOT NULL,
    version integer NOT NULL,
    invocation_id uuid,
    level text NOT NULL,
    message text NOT NULL,
    method text,
    path text,
    status integer,
    error_code text,
    duration_ms integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT function_logs_level_check CHECK ((level = ANY (ARRAY['log'::text, 'info'::text, 'debug'::text, 'warn'::text, 'error'::text])))
);


ALTER TABLE platform.function_logs OWNER TO postgres;

--
-- Name: function_logs_id_seq; Type: SEQUENCE; Schema: platform; Owner: postgres
--

ALTER TABLE platform.function_logs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME platform.function_logs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: function_secrets; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.function_secrets (
    project_id uuid NOT NULL,
    name text NOT NULL,
    value_encrypted bytea NOT NULL,
    value_sha256 text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT function_secrets_name_check CHECK (((name ~ '^[A-Za-z_][A-Za-z0-9_]{0,255}$'::text) AND (name !~~ 'SUPABASE\_%'::text)))
);


ALTER TABLE platform.function_secrets OWNER TO postgres;

--
-- Name: function_version_counters; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.function_version_counters (
    project_id uuid NOT NULL,
    name text NOT NULL,
    last_version integer NOT NULL
);


ALTER TABLE platform.function_version_counters OWNER TO postgres;

--
-- Name: functions; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.functions (
    project_id uuid NOT NULL,
    name text NOT NULL,
    version integer NOT NULL,
    entrypoint text NOT NULL,
    verify_jwt boolean DEFAULT true NOT NULL,
    files jsonb NOT NULL,
    bundle text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    created_by uuid,
    CONSTRAINT functions_name_check CHECK ((name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'::text)),
    CONSTRAINT functions_version_check CHECK ((version > 0))
);


ALTER TABLE platform.functions OWNER TO postgres;

--
-- Name: members; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.members (
    organization_id uuid NOT NULL,
    account_id uuid NOT NULL,
    role text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT members_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'developer'::text])))
);


ALTER TABLE platform.members OWNER TO postgres;

--
-- Name: organizations; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.organizations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE platform.organizations OWNER TO postgres;

--
-- Name: project_config; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.project_config (
    project_id uuid NOT NULL,
    area text NOT NULL,
    settings jsonb DEFAULT '{}'::jsonb NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE platform.project_config OWNER TO postgres;

--
-- Name: projects; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.projects (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    ref text NOT NULL,
    name text NOT NULL,
    organization_id uuid NOT NULL,
    db_name text NOT NULL,
    owner_role text NOT NULL,
    owner_password_sealed text NOT NULL,
    is_default boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    migrated text,
    CONSTRAINT projects_ref_check CHECK ((ref ~ '^[a-z]{20}$'::text))
);


ALTER TABLE platform.projects OWNER TO postgres;

--
-- Name: rate_buckets; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.rate_buckets (
    bucket text NOT NULL,
    subject text NOT NULL,
    tat timestamp with time zone NOT NULL
);


ALTER TABLE platform.rate_buckets OWNER TO postgres;

--
-- Name: request_usage; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.request_usage (
    project_id uuid NOT NULL,
    day date NOT NULL,
    requests bigint NOT NULL,
    CONSTRAINT request_usage_requests_check CHECK ((requests >= 0))
);


ALTER TABLE platform.request_usage OWNER TO postgres;

--
-- Name: sessions; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    account_id uuid NOT NULL,
    token_hash bytea NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE platform.sessions OWNER TO postgres;

--
-- Name: signing_keys; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.signing_keys (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    kid text NOT NULL,
    public_jwk jsonb NOT NULL,
    private_jwk_sealed text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE platform.signing_keys OWNER TO postgres;

--
-- Name: workflow_definitions; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.workflow_definitions (
    project_id uuid NOT NULL,
    name text NOT NULL,
    version integer NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    steps jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT workflow_definitions_name_check CHECK ((name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'::text)),
    CONSTRAINT workflow_definitions_version_check CHECK ((version > 0))
);


ALTER TABLE platform.workflow_definitions OWNER TO postgres;

--
-- Name: workflow_events; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.workflow_events (
    id bigint NOT NULL,
    project_id uuid NOT NULL,
    event text NOT NULL,
    run_id uuid NOT NULL,
    workflow text NOT NULL,
    step text,
    attempt integer,
    at timestamp with time zone NOT NULL,
    ship_attempts integer DEFAULT 0 NOT NULL
);


ALTER TABLE platform.workflow_events OWNER TO postgres;

--
-- Name: workflow_events_id_seq; Type: SEQUENCE; Schema: platform; Owner: postgres
--

CREATE SEQUENCE platform.workflow_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE platform.workflow_events_id_seq OWNER TO postgres;

--
-- Name: workflow_events_id_seq; Type: SEQUENCE OWNED BY; Schema: platform; Owner: postgres
--

ALTER SEQUENCE platform.workflow_events_id_seq OWNED BY platform.workflow_events.id;


--
-- Name: workflow_log_drains; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.workflow_log_drains (
    project_id uuid NOT NULL,
    url text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE platform.workflow_log_drains OWNER TO postgres;

--
-- Name: workflow_queue_triggers; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.workflow_queue_triggers (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    queue text NOT NULL,
    workflow text NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE platform.workflow_queue_triggers OWNER TO postgres;

--
-- Name: workflow_row_triggers; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.workflow_row_triggers (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    schema_name text NOT NULL,
    table_name text NOT NULL,
    events text[] NOT NULL,
    filter jsonb,
    workflow text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE platform.workflow_row_triggers OWNER TO postgres;

--
-- Name: workflow_run_steps; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.workflow_run_steps (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    run_id uuid NOT NULL,
    "position" integer NOT NULL,
    key text NOT NULL,
    kind text NOT NULL,
    status text NOT NULL,
    attempt integer DEFAULT 0 NOT NULL,
    max_attempts integer NOT NULL,
    output jsonb,
    error text,
    compensating boolean DEFAULT false NOT NULL,
    parent_step_id uuid,
    child_run_id uuid,
    started_at timestamp with time zone,
    next_attempt_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT workflow_run_steps_error_check CHECK ((char_length(error) <= 2000)),
    CONSTRAINT workflow_run_steps_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'running'::text, 'succeeded'::text, 'failed'::text, 'skipped'::text])))
);


ALTER TABLE platform.workflow_run_steps OWNER TO postgres;

--
-- Name: workflow_runs; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.workflow_runs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    workflow text NOT NULL,
    version integer NOT NULL,
    status text NOT NULL,
    cursor integer DEFAULT 0 NOT NULL,
    input jsonb DEFAULT '{}'::jsonb NOT NULL,
    output jsonb,
    compensation_state text DEFAULT 'none'::text NOT NULL,
    compensation_cursor integer,
    last_error text,
    idempotency_key text,
    lease_owner text,
    lease_until timestamp with time zone,
    wake_at timestamp with time zone,
    depth integer DEFAULT 0 NOT NULL,
    parent_run_id uuid,
    parent_step_id uuid,
    trigger text DEFAULT 'api'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT workflow_runs_compensation_state_check CHECK ((compensation_state = ANY (ARRAY['none'::text, 'running'::text, 'compensated'::text, 'incomplete'::text]))),
    CONSTRAINT workflow_runs_idempotency_key_check CHECK ((char_length(idempotency_key) <= 400)),
    CONSTRAINT workflow_runs_last_error_check CHECK ((char_length(last_error) <= 2000)),
    CONSTRAINT workflow_runs_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'running'::text, 'waiting'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))
);


ALTER TABLE platform.workflow_runs OWNER TO postgres;

--
-- Name: workflow_signals; Type: TABLE; Schema: platform; Owner: postgres
--

CREATE TABLE platform.workflow_signals (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    run_id uuid NOT NULL,
    signal text NOT NULL,
    payload jsonb,
    idempotency_key text,
    consumed_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE platform.workflow_signals OWNER TO postgres;

--
-- Name: config_audit id; Type: DEFAULT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.config_audit ALTER COLUMN id SET DEFAULT nextval('platform.config_audit_id_seq'::regclass);


--
-- Name: workflow_events id; Type: DEFAULT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_events ALTER COLUMN id SET DEFAULT nextval('platform.workflow_events_id_seq'::regclass);


--
-- Name: migrations migrations_pkey; Type: CONSTRAINT; Schema: hearth; Owner: postgres
--

ALTER TABLE ONLY hearth.migrations
    ADD CONSTRAINT migrations_pkey PRIMARY KEY (id);


--
-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);


--
-- Name: api_keys api_keys_key_hash_key; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.api_keys
    ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);


--
-- Name: api_keys api_keys_project_id_type_name_key; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.api_keys
    ADD CONSTRAINT api_keys_project_id_type_name_key UNIQUE (project_id, type, name);


--
-- Name: config_audit config_audit_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.config_audit
    ADD CONSTRAINT config_audit_pkey PRIMARY KEY (id);


--
-- Name: cron_fires cron_fires_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.cron_fires
    ADD CONSTRAINT cron_fires_pkey PRIMARY KEY (job_id, minute);


--
-- Name: cron_jobs cron_jobs_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.cron_jobs
    ADD CONSTRAINT cron_jobs_pkey PRIMARY KEY (id);


--
-- Name: cron_jobs cron_jobs_project_id_name_key; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.cron_jobs
    ADD CONSTRAINT cron_jobs_project_id_name_key UNIQUE (project_id, name);


--
-- Name: function_logs function_logs_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.function_logs
    ADD CONSTRAINT function_logs_pkey PRIMARY KEY (id);


--
-- Name: function_secrets function_secrets_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.function_secrets
    ADD CONSTRAINT function_secrets_pkey PRIMARY KEY (project_id, name);


--
-- Name: function_version_counters function_version_counters_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.function_version_counters
    ADD CONSTRAINT function_version_counters_pkey PRIMARY KEY (project_id, name);


--
-- Name: functions functions_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.functions
    ADD CONSTRAINT functions_pkey PRIMARY KEY (project_id, name, version);


--
-- Name: members members_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.members
    ADD CONSTRAINT members_pkey PRIMARY KEY (organization_id, account_id);


--
-- Name: organizations organizations_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.organizations
    ADD CONSTRAINT organizations_pkey PRIMARY KEY (id);


--
-- Name: project_config project_config_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.project_config
    ADD CONSTRAINT project_config_pkey PRIMARY KEY (project_id, area);


--
-- Name: projects projects_db_name_key; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.projects
    ADD CONSTRAINT projects_db_name_key UNIQUE (db_name);


--
-- Name: projects projects_owner_role_key; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.projects
    ADD CONSTRAINT projects_owner_role_key UNIQUE (owner_role);


--
-- Name: projects projects_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.projects
    ADD CONSTRAINT projects_pkey PRIMARY KEY (id);


--
-- Name: projects projects_ref_key; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.projects
    ADD CONSTRAINT projects_ref_key UNIQUE (ref);


--
-- Name: rate_buckets rate_buckets_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.rate_buckets
    ADD CONSTRAINT rate_buckets_pkey PRIMARY KEY (bucket, subject);


--
-- Name: request_usage request_usage_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.request_usage
    ADD CONSTRAINT request_usage_pkey PRIMARY KEY (project_id, day);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);


--
-- Name: sessions sessions_token_hash_key; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.sessions
    ADD CONSTRAINT sessions_token_hash_key UNIQUE (token_hash);


--
-- Name: signing_keys signing_keys_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.signing_keys
    ADD CONSTRAINT signing_keys_pkey PRIMARY KEY (id);


--
-- Name: workflow_definitions workflow_definitions_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_definitions
    ADD CONSTRAINT workflow_definitions_pkey PRIMARY KEY (project_id, name, version);


--
-- Name: workflow_events workflow_events_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_events
    ADD CONSTRAINT workflow_events_pkey PRIMARY KEY (id);


--
-- Name: workflow_log_drains workflow_log_drains_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_log_drains
    ADD CONSTRAINT workflow_log_drains_pkey PRIMARY KEY (project_id);


--
-- Name: workflow_queue_triggers workflow_queue_triggers_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_queue_triggers
    ADD CONSTRAINT workflow_queue_triggers_pkey PRIMARY KEY (id);


--
-- Name: workflow_queue_triggers workflow_queue_triggers_project_id_queue_key; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_queue_triggers
    ADD CONSTRAINT workflow_queue_triggers_project_id_queue_key UNIQUE (project_id, queue);


--
-- Name: workflow_row_triggers workflow_row_triggers_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_row_triggers
    ADD CONSTRAINT workflow_row_triggers_pkey PRIMARY KEY (id);


--
-- Name: workflow_row_triggers workflow_row_triggers_project_id_schema_name_table_name_wor_key; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_row_triggers
    ADD CONSTRAINT workflow_row_triggers_project_id_schema_name_table_name_wor_key UNIQUE (project_id, schema_name, table_name, workflow);


--
-- Name: workflow_run_steps workflow_run_steps_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_run_steps
    ADD CONSTRAINT workflow_run_steps_pkey PRIMARY KEY (id);


--
-- Name: workflow_run_steps workflow_run_steps_run_id_key_key; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_run_steps
    ADD CONSTRAINT workflow_run_steps_run_id_key_key UNIQUE (run_id, key);


--
-- Name: workflow_runs workflow_runs_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_runs
    ADD CONSTRAINT workflow_runs_pkey PRIMARY KEY (id);


--
-- Name: workflow_signals workflow_signals_pkey; Type: CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_signals
    ADD CONSTRAINT workflow_signals_pkey PRIMARY KEY (id);


--
-- Name: accounts_email_key; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE UNIQUE INDEX accounts_email_key ON platform.accounts USING btree (lower(email));


--
-- Name: config_audit_project; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX config_audit_project ON platform.config_audit USING btree (project_id, id DESC);


--
-- Name: function_logs_by_function_id; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX function_logs_by_function_id ON platform.function_logs USING btree (project_id, function_name, id DESC);


--
-- Name: function_logs_created_at; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX function_logs_created_at ON platform.function_logs USING btree (created_at);


--
-- Name: function_logs_recent; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX function_logs_recent ON platform.function_logs USING btree (project_id, function_name, created_at DESC, id DESC);


--
-- Name: projects_one_default; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE UNIQUE INDEX projects_one_default ON platform.projects USING btree (is_default) WHERE is_default;


--
-- Name: rate_buckets_tat_idx; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX rate_buckets_tat_idx ON platform.rate_buckets USING btree (tat);


--
-- Name: sessions_expires_at; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX sessions_expires_at ON platform.sessions USING btree (expires_at);


--
-- Name: signing_keys_project; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX signing_keys_project ON platform.signing_keys USING btree (project_id);


--
-- Name: workflow_events_project; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX workflow_events_project ON platform.workflow_events USING btree (project_id, id);


--
-- Name: workflow_run_steps_parent; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX workflow_run_steps_parent ON platform.workflow_run_steps USING btree (parent_step_id) WHERE (parent_step_id IS NOT NULL);


--
-- Name: workflow_runs_due; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX workflow_runs_due ON platform.workflow_runs USING btree (project_id, wake_at) WHERE ((status = ANY (ARRAY['pending'::text, 'running'::text, 'waiting'::text])) OR (compensation_state = 'running'::text));


--
-- Name: workflow_runs_finished; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX workflow_runs_finished ON platform.workflow_runs USING btree (finished_at) WHERE (finished_at IS NOT NULL);


--
-- Name: workflow_runs_idempotency; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE UNIQUE INDEX workflow_runs_idempotency ON platform.workflow_runs USING btree (project_id, workflow, idempotency_key) WHERE (idempotency_key IS NOT NULL);


--
-- Name: workflow_runs_list; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX workflow_runs_list ON platform.workflow_runs USING btree (project_id, workflow, created_at DESC);


--
-- Name: workflow_runs_parent; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX workflow_runs_parent ON platform.workflow_runs USING btree (parent_run_id) WHERE (parent_run_id IS NOT NULL);


--
-- Name: workflow_signals_idempotency; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE UNIQUE INDEX workflow_signals_idempotency ON platform.workflow_signals USING btree (run_id, idempotency_key) WHERE (idempotency_key IS NOT NULL);


--
-- Name: workflow_signals_pending; Type: INDEX; Schema: platform; Owner: postgres
--

CREATE INDEX workflow_signals_pending ON platform.workflow_signals USING btree (run_id, signal, created_at) WHERE (consumed_at IS NULL);


--
-- Name: api_keys api_keys_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.api_keys
    ADD CONSTRAINT api_keys_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: config_audit config_audit_account_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.config_audit
    ADD CONSTRAINT config_audit_account_id_fkey FOREIGN KEY (account_id) REFERENCES platform.accounts(id) ON DELETE SET NULL;


--
-- Name: config_audit config_audit_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.config_audit
    ADD CONSTRAINT config_audit_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: cron_fires cron_fires_job_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.cron_fires
    ADD CONSTRAINT cron_fires_job_id_fkey FOREIGN KEY (job_id) REFERENCES platform.cron_jobs(id) ON DELETE CASCADE;


--
-- Name: cron_jobs cron_jobs_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.cron_jobs
    ADD CONSTRAINT cron_jobs_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: function_logs function_logs_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.function_logs
    ADD CONSTRAINT function_logs_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: function_secrets function_secrets_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.function_secrets
    ADD CONSTRAINT function_secrets_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: function_version_counters function_version_counters_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.function_version_counters
    ADD CONSTRAINT function_version_counters_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: functions functions_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.functions
    ADD CONSTRAINT functions_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: members members_account_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.members
    ADD CONSTRAINT members_account_id_fkey FOREIGN KEY (account_id) REFERENCES platform.accounts(id) ON DELETE CASCADE;


--
-- Name: members members_organization_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.members
    ADD CONSTRAINT members_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES platform.organizations(id) ON DELETE CASCADE;


--
-- Name: project_config project_config_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.project_config
    ADD CONSTRAINT project_config_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: projects projects_organization_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.projects
    ADD CONSTRAINT projects_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES platform.organizations(id);


--
-- Name: request_usage request_usage_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.request_usage
    ADD CONSTRAINT request_usage_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: sessions sessions_account_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.sessions
    ADD CONSTRAINT sessions_account_id_fkey FOREIGN KEY (account_id) REFERENCES platform.accounts(id) ON DELETE CASCADE;


--
-- Name: signing_keys signing_keys_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.signing_keys
    ADD CONSTRAINT signing_keys_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: workflow_definitions workflow_definitions_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_definitions
    ADD CONSTRAINT workflow_definitions_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: workflow_events workflow_events_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_events
    ADD CONSTRAINT workflow_events_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: workflow_log_drains workflow_log_drains_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_log_drains
    ADD CONSTRAINT workflow_log_drains_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: workflow_queue_triggers workflow_queue_triggers_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_queue_triggers
    ADD CONSTRAINT workflow_queue_triggers_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: workflow_row_triggers workflow_row_triggers_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_row_triggers
    ADD CONSTRAINT workflow_row_triggers_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: workflow_run_steps workflow_run_steps_parent_step_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_run_steps
    ADD CONSTRAINT workflow_run_steps_parent_step_id_fkey FOREIGN KEY (parent_step_id) REFERENCES platform.workflow_run_steps(id) ON DELETE CASCADE;


--
-- Name: workflow_run_steps workflow_run_steps_run_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_run_steps
    ADD CONSTRAINT workflow_run_steps_run_id_fkey FOREIGN KEY (run_id) REFERENCES platform.workflow_runs(id) ON DELETE CASCADE;


--
-- Name: workflow_runs workflow_runs_parent_run_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_runs
    ADD CONSTRAINT workflow_runs_parent_run_id_fkey FOREIGN KEY (parent_run_id) REFERENCES platform.workflow_runs(id) ON DELETE SET NULL;


--
-- Name: workflow_runs workflow_runs_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_runs
    ADD CONSTRAINT workflow_runs_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: workflow_runs workflow_runs_project_id_workflow_version_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_runs
    ADD CONSTRAINT workflow_runs_project_id_workflow_version_fkey FOREIGN KEY (project_id, workflow, version) REFERENCES platform.workflow_definitions(project_id, name, version);


--
-- Name: workflow_signals workflow_signals_project_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_signals
    ADD CONSTRAINT workflow_signals_project_id_fkey FOREIGN KEY (project_id) REFERENCES platform.projects(id) ON DELETE CASCADE;


--
-- Name: workflow_signals workflow_signals_run_id_fkey; Type: FK CONSTRAINT; Schema: platform; Owner: postgres
--

ALTER TABLE ONLY platform.workflow_signals
    ADD CONSTRAINT workflow_signals_run_id_fkey FOREIGN KEY (run_id) REFERENCES platform.workflow_runs(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


