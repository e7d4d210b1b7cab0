import { describe, expect, it } from 'vitest';
import { normalizeOrigin, originAllowed, parseOrigins } from '../../../src/platform/mcp/allowed-origins.ts';
import { mcpOriginsProblems } from '../../../src/platform/config.ts';

describe('MCP allowed origins', () => {
  it('compares origins as serialised: case, default port, trailing slash', () => {
    expect(normalizeOrigin('HTTPS://App.Example.com:443/')).toBe('https://app.example.com');
    expect(normalizeOrigin('http://localhost:5173')).toBe('http://localhost:5173');
    for (const bad of ['null', 'app.example.com', 'ftp://x.example', 'https://x.example/path', 'https://u:p@x.example', 'https://x.example?q', '']) {
      expect(normalizeOrigin(bad), bad).toBeUndefined();
    }
  });

  it('serves no Origin and the allowed ones only', () => {
    const allowed = new Set(parseOrigins(' https://a.example , http://localhost:3000').origins);
    expect(originAllowed(undefined, allowed)).toBe(true);
    expect(originAllowed('https://A.example:443', allowed)).toBe(true);
    expect(originAllowed('http://a.example', allowed)).toBe(false);
    expect(originAllowed('null', allowed)).toBe(false);
    expect(originAllowed('https://a.example.evil.example', allowed)).toBe(false);
  });

  it('refuses a configuration entry that is not an origin', () => {
    const check = (value: string) => mcpOriginsProblems({ MCP_ALLOWED_ORIGINS: value });
    expect(check('https://a.example,http://localhost:5173')).toEqual([]);
    expect(check('https://a.example/app')).toEqual([expect.stringContaining('MCP_ALLOWED_ORIGINS: https://a.example/app')]);
  });
});
