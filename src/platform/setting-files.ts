// Settings given as files: `<NAME>_FILE` names a file whose content is the setting's value, the
// convention of the official Postgres and Redis images, since Kubernetes and Docker hand secrets
// over as files. And how a setting's value may be shown in a message: a secret's never is.
import { readFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import { redactUrl } from './redact-url.ts';

export interface SettingFiles {
  /** The values read, by setting name (without `_FILE`). */
  values: Record<string, string>;
  /** One line per setting given twice or whose file cannot be read. */
  problems: string[];
}

const given = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

export function readSettingFiles(env: NodeJS.ProcessEnv, names: readonly string[]): SettingFiles {
  const values: Record<string, string> = {};
  const problems: string[] = [];
  for (const name of names) {
    const file = env[`${name}_FILE`];
    if (!given(file)) continue;
    if (given(env[name])) {
      problems.push(`${name} and ${name}_FILE are both set: give one of them`);
      continue;
    }
    try {
      // The file's trailing newline is no part of the value (echo adds one).
      values[name] = readFileSync(file.trim(), 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      problems.push(`${name}_FILE: cannot read ${file.trim()} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  return { values, problems };
}

/** Settings declared with `secret: true` in their schema: never printed. */
export const isSecret = (schema: TSchema | undefined): boolean => schema?.secret === true;

/** A value as a configuration error may show it: a secret hidden, a URL's password masked. */
export function shownValue(value: unknown, secret: boolean): string {
  if (!secret) return JSON.stringify(value);
  if (typeof value === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return JSON.stringify(redactUrl(value));
  return '(hidden)';
}
