import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A message the server accepted: the envelope's recipients and the message as parsed back. */
export interface Received {
  rcptTo: string[];
  mail: ParsedMail;
}

/** How the server answers: accept, or refuse the recipient (RCPT TO) or the message (after DATA), the next `times` (default: always). */
export type SmtpMode = { kind: 'accept' } | { kind: 'refuse-rcpt' | 'refuse-data'; code: number; text: string; times?: number };

/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package), plain (no STARTTLS, no AUTH): it
 * keeps what it accepted, parsed back with `mailparser`; `stop()` and `start()` again on the
 * same port make an outage.
 */
export class TestSmtpServer {
  readonly received: Received[] = [];
  /** Every RCPT TO and DATA it answered with an error. */
  refusals = 0;
  mode: SmtpMode = { kind: 'accept' };
  private server: SMTPServer | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** The sessions a refusal was counted for: `times` counts messages, not recipients. */
  private readonly counted = new WeakSet<object>();

  private refuse(session: object): Error {
    const m = this.mode as { code: number; text: string; times?: number };
    const error = Object.assign(new Error(m.text), { responseCode: m.code });
    if (this.counted.has(session)) return error;
    this.counted.add(session);
    this.refusals += 1;
    if (m.times !== undefined && --m.times <= 0) this.mode = { kind: 'accept' };
    return error;
  }

  async start(): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo: (_address, session, callback) => callback(this.mode.kind === 'refuse-rcpt' || this.counted.has(session) ? this.refuse(session) : null),
      onData: (stream, session, callback) => {
        simpleParser(stream)
          .then((mail) => {
            if (this.mode.kind === 'refuse-data') return callback(this.refuse(session));
            this.received.push({ rcptTo: session.envelope.rcptTo.map((r) => r.address), mail });
            callback(null);
          })
          .catch((err: Error) => callback(err));
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
