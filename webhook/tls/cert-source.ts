import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../log/logger.js';
import type { WebhookMetrics } from '../metrics.js';
import { validatePair, type CertificatePair } from './pair.js';

export interface CertificateSourceOptions {
  /** The mounted cert-manager Secret: `tls.crt` and `tls.key`. */
  dir: string;
  pollIntervalMs: number;
  logger: Logger;
  metrics: WebhookMetrics;
  /** Called with every newly accepted pair (the server swaps it in with setSecureContext). */
  onPair: (pair: CertificatePair) => void;
  now?: () => Date;
}

export type ReloadResult = 'loaded' | 'unchanged' | 'rejected' | 'unreadable' | 'in-flux';

/**
 * Serves the certificate pair from a directory and follows its rotation (after cert-manager's
 * pkg/server/tls FileCertificateSource): it polls, compares the bytes, validates a changed
 * pair and hands it over; a broken pair is logged and counted once and the old pair keeps
 * serving. Polling, not inotify: kubelet updates Secret volumes by swapping a symlink, which
 * file watches miss, and a poll every few seconds is cheap.
 */
export class CertificateSource {
  private readonly options: CertificateSourceOptions;
  private readonly now: () => Date;
  private currentPair: CertificatePair | undefined;
  private rejectedCert: Buffer | undefined;
  private rejectedKey: Buffer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReloadResult> | undefined;
  private unreadable = false;

  constructor(options: CertificateSourceOptions) {
    this.options = options;
    this.now = options.now ?? ((): Date => new Date());
  }

  get certPath(): string {
    return join(this.options.dir, 'tls.crt');
  }

  get keyPath(): string {
    return join(this.options.dir, 'tls.key');
  }

  /** The pair being served, if any. */
  current(): CertificatePair | undefined {
    return this.currentPair;
  }

  /** True while a pair is being served and is inside its validity window: drives /readyz. */
  isValid(): boolean {
    const pair = this.currentPair;
    if (pair === undefined) return false;
    const now = this.now().getTime();
    return now >= pair.notBefore.getTime() && now < pair.notAfter.getTime();
  }

  /** Loads once now, then polls. Resolves with the first load's result (the server may start without a pair). */
  async start(): Promise<ReloadResult> {
    const first = await this.reload();
    this.timer = setInterval(() => {
      void this.reload();
    }, this.options.pollIntervalMs);
    this.timer.unref();
    return first;
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One poll. Concurrent calls share the poll in progress. Never rejects. */
  reload(): Promise<ReloadResult> {
    this.running ??= this.poll().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async readPair(): Promise<{ cert: Buffer; key: Buffer }> {
    const [cert, key] = await Promise.all([readFile(this.certPath), readFile(this.keyPath)]);
    return { cert, key };
  }

  private async poll(): Promise<ReloadResult> {
    const log = this.options.logger;
    let files: { cert: Buffer; key: Buffer };
    try {
      files = await this.readPair();
      // A rotation can land between the two reads; read again and only trust a stable pair.
      const again = await this.readPair();
      if (!files.cert.equals(again.cert) || !files.key.equals(again.key)) return 'in-flux';
    } catch (error) {
      // Logged and counted once per outage, not once per poll.
      if (!this.unreadable) {
        log.error({ err: error, certDir: this.options.dir, serving: this.currentPair?.serialNumber ?? null }, 'cannot read tls.crt/tls.key; the current certificate (if any) keeps serving');
        this.options.metrics.certificateReloads.inc({ result: 'failure' });
      }
      this.unreadable = true;
      return 'unreadable';
    }
    this.unreadable = false;
    const current = this.currentPair;
    if (current !== undefined && current.cert.equals(files.cert) && current.key.equals(files.key)) return 'unchanged';
    if (this.rejectedCert?.equals(files.cert) === true && this.rejectedKey?.equals(files.key) === true) return 'unchanged';

    const validated = validatePair(files.cert, files.key, this.now());
    if (!validated.ok) {
      this.rejectedCert = files.cert;
      this.rejectedKey = files.key;
      this.options.metrics.certificateReloads.inc({ result: 'failure' });
      log.error({ certDir: this.options.dir, problem: validated.error, serving: current?.serialNumber ?? null }, 'rejected the certificate pair on disk; the previous certificate keeps serving');
      return 'rejected';
    }
    const pair = validated.value;
    try {
      this.options.onPair(pair);
    } catch (error) {
      this.rejectedCert = files.cert;
      this.rejectedKey = files.key;
      this.options.metrics.certificateReloads.inc({ result: 'failure' });
      log.error({ err: error, serial: pair.serialNumber }, 'could not install the certificate pair; the previous certificate keeps serving');
      return 'rejected';
    }
    this.currentPair = pair;
    this.rejectedCert = undefined;
    this.rejectedKey = undefined;
    this.options.metrics.certificateReloads.inc({ result: 'success' });
    this.options.metrics.certificateExpiry.set(pair.notAfter.getTime() / 1000);
    log.info({ serial: pair.serialNumber, subject: pair.subject, notAfter: pair.notAfter.toISOString(), previous: current?.serialNumber ?? null }, current === undefined ? 'loaded the serving certificate' : 'rotated the serving certificate');
    return 'loaded';
  }
}
