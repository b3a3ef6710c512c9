/**
 * The page cookies' names and attributes: shared by the session hook that reads them
 * (accounts/page-context.hook.ts), the routes that set them (sign-in, sign-out) and the tests.
 */
export function cookieNames(secure: boolean): { session: string; anon: string } {
  // __Host- cookies are only accepted over https, bound to this host and path /.
  return secure ? { session: '__Host-gh_session', anon: '__Host-gh_anon' } : { session: 'gh_session', anon: 'gh_anon' };
}

export function cookieOptions(services: { config: { secureCookies: boolean } }, maxAgeSeconds?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: services.config.secureCookies,
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}
