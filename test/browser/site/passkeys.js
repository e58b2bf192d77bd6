// The passkey ceremonies as a browser app runs them: options from the service, the browser's own WebAuthn (here
// Chromium's virtual authenticator), the credential's JSON back to the service. Cookies only: no token is read.
async function json(method, path, body) {
  const response = await fetch(`${API}${path}`, {
    method,
    credentials: 'include',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, body: text === '' ? null : JSON.parse(text) }
}

window.spa.enrolPasskey = async (password, name) => {
  const options = await json('POST', '/v1/me/passkeys/options')
  if (options.status !== 200) return options
  const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options.body) })
  return json('POST', '/v1/me/passkeys', { name, password, response: credential.toJSON() })
}

window.spa.signInWithPasskey = async () => {
  const options = await json('POST', '/v1/login/passkey/options')
  if (options.status !== 200) return options
  const { challengeId, ...publicKey } = options.body
  const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey) })
  return json('POST', '/v1/login/passkey', { challengeId, response: credential.toJSON() })
}

window.spa.passkeys = () => json('GET', '/v1/me/passkeys')
window.spa.removePasskey = (id, password) => json('DELETE', `/v1/me/passkeys/${id}`, { password })
