// The SPA's second sign-in screen. The password step (spa.login) answers mfaRequired and the service keeps the attempt
// in its HttpOnly svc_mfa_token cookie (Path=/v1/login): the page holds nothing between the steps, the browser sends
// the cookie with these two calls, and only the code the user types goes in the body.
Object.assign(window.spa, {
  sendLoginCode: () => call('POST', '/v1/login/mfa/sms'),
  completeLogin: (answer) => call('POST', '/v1/login/mfa', { body: answer }),
})
