-- The daily recipient quota that applies to a tenant: its own (tenants.daily_recipient_quota, set by
-- npm run tenant:quota) or else p_default_limit (SVC_SMS_TENANT_DAILY_RECIPIENTS); 0: no limit. Read by every send,
-- so a change applies at once on every instance.
create or replace function svc_daily_quota_limit(p_tenant_id bigint, p_default_limit integer) returns integer
language sql stable security invoker as $$
  select coalesce((select t.daily_recipient_quota from tenants t where t.id = p_tenant_id), p_default_limit)
$$;
grant execute on function svc_daily_quota_limit(bigint, integer) to svc_app;
