-- Runs once, as the superuser, when the PostgreSQL volume is new (docker-entrypoint-initdb.d). The service connects
-- as svc_login, which owns nothing, cannot bypass RLS and has no privilege of its own (noinherit): every transaction
-- switches to svc_app. Migrations connect as the owner (POSTGRES_USER) through DATABASE_MIGRATION_URL.
create role svc_app nologin nosuperuser nobypassrls noinherit;
create role svc_login login password 'svc_login' nosuperuser nobypassrls noinherit nocreatedb nocreaterole;
grant svc_app to svc_login;
