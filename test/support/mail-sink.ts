import { simpleParser, type AddressObject } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { createMailTransport, sendQueuedMail, type SendReport } from '../../src/modules/mail/mail.service.js';
import type { Services } from '../../src/services.js';

/**
 * A real SMTP server for the suite (issue #38, tests): `smtp-server` on a loopback port, no TLS
 * (STARTTLS not offered, so the client speaks plain SMTP), AUTH PLAIN/LOGIN optional, every mail
 * parsed with mailparser's simpleParser. GATEHOUSE_SMTP_URL=sink.url points the service at it.
 */
export interface ReceivedMail {
  /** The envelope (MAIL FROM / RCPT TO), as the server saw them. */
  envelopeFrom: string;
  envelopeTo: string[];
  /** The headers and parts, parsed. */
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** The user name the client authenticated as, if it did. */
  user: string | undefined;
}

export interface MailSink {
  port: number;
  /** `smtp://127.0.0.1:<port>`, or with the credentials given to startMailSink. */
  url: string;
  readonly mails: readonly ReceivedMail[];
  /** The first mail, received or still to come, that matches; rejects after `timeoutMs` (default 10 s). */
  waitForMail(predicate?: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  stop(): Promise<void>;
}

function addresses(value: AddressObject | AddressObject[] | undefined): string[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return list.flatMap((entry) => entry.value.map((address) => address.address ?? '')).filter(Boolean);
}

/**
 * Starts the sink on `port` (0: any free one). With `credentials`, AUTH is required and only
 * those are accepted (and `url` carries them).
 */
export async function startMailSink(options: { port?: number; credentials?: { user: string; pass: string } } = {}): Promise<MailSink> {
  const mails: ReceivedMail[] = [];
  const waiters: { predicate: (mail: ReceivedMail) => boolean; resolve: (mail: ReceivedMail) => void }[] = [];
  const credentials = options.credentials;
  const server = new SMTPServer({
    disabledCommands: credentials ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: credentials === undefined,
    // Credentials over plain text are fine on loopback in a test.
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (credentials && auth.username === credentials.user && auth.password === credentials.pass) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          const mail: ReceivedMail = {
            envelopeFrom: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            from: addresses(parsed.from)[0] ?? '',
            to: addresses(parsed.to),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
            user: typeof session.user === 'string' ? session.user : undefined,
          };
          mails.push(mail);
          for (const waiter of [...waiters]) {
            if (waiter.predicate(mail)) {
              waiters.splice(waiters.indexOf(waiter), 1);
              waiter.resolve(mail);
            }
          }
          callback();
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      const address = server.server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
  const auth = credentials ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass)}@` : '';
  return {
    port,
    url: `smtp://${auth}127.0.0.1:${port}`,
    mails,
    waitForMail(predicate = () => true, timeoutMs = 10_000) {
      const found = mails.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (mail: ReceivedMail) => {
            clearTimeout(timer);
            resolve(mail);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`no matching mail reached the sink within ${timeoutMs} ms (${mails.length} received)`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Makes the service send its due mail now, as its worker would on its next round, and resolves
 * once every due mail was sent or put back for a retry (tests never wait for the worker's timer).
 */
export async function sendMailNow(services: Services, holder = 'test-sender'): Promise<SendReport> {
  const transport = createMailTransport(services);
  if (transport === undefined) return { sent: 0, retrying: 0, failed: 0 };
  try {
    return await sendQueuedMail(services, transport, holder);
  } finally {
    transport.close();
  }
}
