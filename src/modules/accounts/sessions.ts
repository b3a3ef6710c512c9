/** One of the person's sessions, as Settings → Sessions shows it (issue #38 §5). */
export interface SessionView {
  /** The session's stored hash: names it in the "End" form; it cannot be turned back into the cookie. */
  id: string;
  device: string;
  address: string | null;
  signedInAt: number;
  lastUsedAt: number;
  /** The session of the browser looking at the list. */
  current: boolean;
}

/**
 * A user agent in a few words for Settings → Sessions (issue #38 §5: "device (user agent)"): the
 * browser and the system, which is what a person recognises ("Firefox on Linux"), not the header's
 * version soup. Order matters: Edge and Opera also say Chrome, Chrome also says Safari.
 */
const BROWSERS: ReadonlyArray<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bChrom(?:e|ium)\/|\bCriOS\//, 'Chrome'],
  [/\bSafari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
];

const SYSTEMS: ReadonlyArray<[RegExp, string]> = [
  [/\bAndroid\b/, 'Android'],
  [/\biPhone\b|\biPad\b|\biPod\b/, 'iOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

export function deviceOf(userAgent: string | null): string {
  if (!userAgent || userAgent.trim() === '') return 'Unknown device';
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  if (browser ?? system) return (browser ?? system) as string;
  // Neither known: the header's first product token (say "gatehouse-cli/1.0"), short.
  return [...(userAgent.trim().split(/\s+/)[0] ?? '')].slice(0, 40).join('');
}
