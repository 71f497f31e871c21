#!/usr/bin/env bash
# The test's "browser" for the authorization code grant of
# core/tests/oidc_provider.rs and the client programs in clients/:
# `browser.sh AUTHORIZATION_URL` follows the provider's redirects with curl
# and a cookie jar (login and consent answer at once, see provider.mjs)
# until the redirect to the client's redirect URI, which it prints instead
# of following. Environment: OIDC_CA (the test CA, PEM file), OIDC_JAR (the
# cookie file), OIDC_REDIRECT (the client's redirect URI).
set -euo pipefail
url=${1:?usage: browser.sh AUTHORIZATION_URL}
: "${OIDC_CA:?OIDC_CA: the test CA file}" "${OIDC_JAR:?OIDC_JAR: the cookie jar}"
: "${OIDC_REDIRECT:?OIDC_REDIRECT: the client redirect URI}"
for _ in $(seq 10); do
  answer=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' --cacert "$OIDC_CA" \
    -b "$OIDC_JAR" -c "$OIDC_JAR" "$url")
  status=${answer%% *}
  location=${answer#* }
  [ "$location" = "$answer" ] && location=
  if [[ "$location" == "$OIDC_REDIRECT"* ]]; then
    printf '%s\n' "$location"
    exit 0
  fi
  if [ -z "$location" ]; then
    echo "browser.sh: $url answered $status without a redirect" >&2
    exit 1
  fi
  url=$location
done
echo "browser.sh: too many redirects" >&2
exit 1
