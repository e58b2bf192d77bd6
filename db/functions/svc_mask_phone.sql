-- A phone number as an audit event may carry it (lib/sms/phone.ts, maskPhone): the first three and the last four
-- digits, or all stars for fewer than eight digits; null stays null. Read by svc_forget_phone_verification's event.
create or replace function svc_mask_phone(p_phone text) returns text language sql immutable as $$
  select case
    when p_phone is null then null
    when length(regexp_replace(p_phone, '\D', '', 'g')) < 8 then '***-****-****'
    else left(regexp_replace(p_phone, '\D', '', 'g'), 3) || '-****-' || right(regexp_replace(p_phone, '\D', '', 'g'), 4)
  end
$$;
