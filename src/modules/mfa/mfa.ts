/** What the second-factor pages show (issue #38 §4); built by mfa.service.ts. */

/** Settings → Security's two-factor section. */
export interface SecondFactorStatus {
  totpEnabled: boolean;
  /** How many passkeys the person has registered: each is a second factor too. */
  passkeys: number;
  recoveryCodesLeft: number;
}

/** A TOTP enrolment waiting for its confirming code. */
export interface TotpEnrolment {
  /** The base32 seed, shown as text for apps that cannot scan. */
  secret: string;
  /** The otpauth:// URI the QR code holds. */
  uri: string;
  /** The QR code as an SVG document, made on the server. */
  qrSvg: string;
}
