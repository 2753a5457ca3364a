import { pino, type Logger } from 'pino';
import type { Config } from '../shared/config.js';

/**
 * Structured JSON logs on stdout (journald captures them). Credentials never reach a log line:
 * request bodies are not logged, and these paths are redacted should an object carry them.
 */
export function createLogger(level: Config['logLevel'], bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { service: 'iam', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        '*.authorization',
        '*.Authorization',
        '*.password',
        '*.client_secret',
        '*.secret',
        '*.token',
        '*.code',
        'headers.cookie',
      ],
      censor: '[redacted]',
    },
  });
}
