// A URL fit for a log line or a message: its password (and any secret-looking query value) masked.
const SECRET_PARAMS = /^(password|pass|pwd|secret|token|sslpassword)$/i;

export function redactUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return '(not a URL)';
  }
  if (url.password) url.password = '***';
  for (const key of [...url.searchParams.keys()]) if (SECRET_PARAMS.test(key)) url.searchParams.set(key, '***');
  return url.toString();
}
