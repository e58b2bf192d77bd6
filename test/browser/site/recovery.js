// The SPA's "forgot password" screens. Recovery is public, yet the calls go through spa.js's credentialed call()
// (classic scripts share their top-level functions) like every other: a real app sends every request the same way,
// and the page still never sees a token or a code, only what the user types.
Object.assign(window.spa, {
  forgot: (account) => call('POST', '/v1/password/forgot', { body: account }),
  reset: (request) => call('POST', '/v1/password/reset', { body: request }),
})
