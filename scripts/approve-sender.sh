#!/usr/bin/env bash
# Records an operator's decision on a tenant's sender number: signs and sends
#   PATCH /internal/sms/sender-settings/SLUG/approval
# exactly as docs/api.md#signed-internal-calls defines the signature, so nobody computes one by hand. NUMBER is the
# number the operator reviewed, as `npm run sender:pending` listed it; it is always sent, so a tenant that changed
# its number after the listing is refused (SENDER_NUMBER_CHANGED) instead of having the new number approved unseen.
# Needs bash, curl and openssl only. Prints the sender setting JSON on success; on failure prints the problem on
# stderr and exits non-zero (2 for wrong usage, 1 otherwise).
set -euo pipefail

usage() {
  echo "usage: BASE_URL=http://host:port SVC_INTERNAL_HMAC_SECRET=... $0 SLUG APPROVED|REJECTED NUMBER [REASON]" >&2
  echo "       NUMBER is the sender number reviewed, as npm run sender:pending listed it; REASON is required for REJECTED" >&2
  exit 2
}

fail() {
  echo "error: $1" >&2
  exit "${2:-1}"
}

# A JSON string literal: backslash and quote escaped, every control character as \u00XX.
json_string() {
  local text=$1 code char
  text=${text//\\/\\\\}
  text=${text//\"/\\\"}
  for code in $(seq 1 31); do
    printf -v char "\\x$(printf '%02x' "$code")"
    text=${text//"$char"/$(printf '\\u%04x' "$code")}
  done
  printf '"%s"' "$text"
}

sha256_hex() { openssl dgst -sha256 | awk '{print $NF}'; }

[[ $# -eq 3 || $# -eq 4 ]] || usage
slug=$1
status=$2
number=$3
reason=${4-}
[[ $status == APPROVED || $status == REJECTED ]] || usage
# Slugs are lowercase letters, digits and hyphens: safe in the path as they are, so the signed path is the sent one.
[[ $slug =~ ^[a-z0-9][a-z0-9-]*$ ]] || fail "SLUG must be a tenant slug (lowercase letters, digits, hyphens)" 2
[[ $number =~ ^[0-9][0-9-]{0,39}$ ]] || fail "NUMBER must be the sender number as sender:pending listed it (digits, hyphens)" 2
if [[ $status == REJECTED && -z ${reason//[[:space:]]/} ]]; then fail "REJECTED needs a non-blank REASON" 2; fi
[[ -n ${BASE_URL:-} ]] || fail "BASE_URL is not set (e.g. http://127.0.0.1:8080)" 2
[[ -n ${SVC_INTERNAL_HMAC_SECRET:-} ]] || fail "SVC_INTERNAL_HMAC_SECRET is not set" 2

body="{\"registrationStatus\":\"$status\",\"senderNumber\":\"$number\""
if [[ $status == REJECTED ]]; then body+=",\"rejectionReason\":$(json_string "$reason")"; fi
body+="}"

path="/internal/sms/sender-settings/$slug/approval"
timestamp=$(date +%s)
body_hash=$(printf '%s' "$body" | sha256_hex)
signature=$(printf '%s\n%s\n%s\n%s\n%s' "$timestamp" PATCH "$path" "$slug" "$body_hash" |
  openssl dgst -sha256 -hmac "$SVC_INTERNAL_HMAC_SECRET" | awk '{print $NF}')

# The status code comes last on its own line, after the body.
response=$(curl --silent --show-error --request PATCH \
  --header 'Content-Type: application/json' \
  --header "X-Tenant-Slug: $slug" \
  --header "X-Timestamp: $timestamp" \
  --header "X-Signature: $signature" \
  --data-binary "$body" \
  --write-out $'\n%{http_code}' \
  "${BASE_URL%/}$path") || fail "request to $BASE_URL failed"
code=${response##*$'\n'}
payload=${response%$'\n'*}

if [[ ! $code =~ ^[0-9]{3}$ || $code -ge 400 ]]; then
  echo "error: HTTP $code" >&2
  printf '%s\n' "$payload" >&2
  exit 1
fi
printf '%s\n' "$payload"
