// The SPA under test. Every call is a credentialed fetch: the browser attaches and stores the service's HttpOnly
// cookies, and this page never sees, stores or sends a token. A call the browser refuses (no CORS) resolves to
// { failed } instead of throwing, so the test can tell "refused by the browser" from an answer of the service.
const API = new URLSearchParams(location.search).get('api')

async function call(method, path, { body, headers = {} } = {}) {
  try {
    const response = await fetch(`${API}${path}`, {
      method,
      credentials: 'include',
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    return {
      status: response.status,
      body: text === '' ? null : JSON.parse(text),
      requestId: response.headers.get('x-request-id'),
      replayed: response.headers.get('idempotent-replayed'),
    }
  } catch (error) {
    return { failed: String(error) }
  }
}

window.spa = {
  login: (credentials) => call('POST', '/v1/login', { body: credentials }),
  me: () => call('GET', '/v1/me'),
  refresh: () => call('POST', '/v1/refresh'),
  send: (message, idempotencyKey) => call('POST', '/v1/sms/send', { body: message, headers: { 'idempotency-key': idempotencyKey } }),
  history: () => call('GET', '/v1/sms/history'),
  message: (id) => call('GET', `/v1/sms/history/${id}`),
  logout: () => call('POST', '/v1/logout'),
}
