// The MCP tools take their argument rules from the REST TypeBox schemas: what
// tools/list advertises is the REST rule itself, and the argument check is the
// REST body validator, so a rule changed for REST is changed for MCP, with the
// same error codes and details.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { inlineRefs } from '../../../src/platform/http/components.ts';
import { compileBodyValidator } from '../../../src/platform/http/validation.ts';
import { toolCatalog } from '../../../src/platform/mcp/tool-catalog.ts';
import { callTool } from '../../../src/platform/mcp/tool-call.ts';
import { linkMcpTools } from '../../../src/links/mcp/mcp-api.ts';
import { CreateCampaignBody } from '../../../src/links/campaigns/campaign-schemas.ts';
import { CreateLinkBody, ListLinksQuery } from '../../../src/links/short-links/link-schemas.ts';
import { FunnelQuery, TrackBody } from '../../../src/links/conversions/conversion-schemas.ts';

// The tools are only listed and called with bad arguments here, so their stores are never reached.
const catalog = toolCatalog(linkMcpTools({ links: {} as never, campaigns: {} as never, pg: {} as never, clickhouse: {} as never, conversions: {} as never, funnels: {} as never }));
const advertised = (name: string) => catalog.listing.find((t) => t.name === name)!;
// As MCP clients get a schema: plain JSON, named schemas written out in place (no $id, no $ref).
const json = (schema: unknown): any => inlineRefs(JSON.parse(JSON.stringify(schema)));
const ctx = { tenantId: 'ws', requestId: 'req-1', log: pino({ level: 'silent' }) };

/** The REST-shaped error of a tool call that must fail. */
async function toolError(name: string, args: unknown) {
  const res = await callTool(catalog.get(name)!, args, ctx);
  expect(res.isError).toBe(true);
  return JSON.parse((res.content[0] as { text: string }).text).error;
}

describe('MCP tool arguments are the REST schemas', () => {
  it('advertises create_link arguments with exactly the rules of the REST create-link body', () => {
    const input = advertised('create_link').inputSchema as any;
    const rest = json(CreateLinkBody);
    for (const field of ['destination', 'shortId', 'iosUrl', 'androidUrl', 'tags', 'campaignId', 'expiresAt', 'scanLimit']) {
      expect(input.properties[field], field).toEqual(rest.properties[field]);
    }
    expect(input.properties.tags).toMatchObject({ type: 'array', maxItems: 20, items: { minLength: 1, maxLength: 50 } });
    expect(input.required).toEqual(rest.required);
    expect(input.additionalProperties).toBe(false);
    // Left out on purpose: the tool offers no pixels and always creates an active link.
    expect(Object.keys(input.properties).sort()).toEqual(Object.keys(rest.properties).filter((k) => k !== 'pixels' && k !== 'isActive').sort());
  });

  it('advertises the other tools with the REST rules they share', () => {
    const listLinks = advertised('list_links').inputSchema as any;
    const query = json(ListLinksQuery).properties;
    expect(listLinks.properties.tags).toMatchObject({ ...query.tag, description: expect.any(String) });
    expect(listLinks.properties.search).toMatchObject({ minLength: query.q.minLength, maxLength: query.q.maxLength });
    expect(listLinks.properties.limit).toMatchObject({ minimum: query.limit.minimum, maximum: query.limit.maximum, default: query.limit.default });
    expect(advertised('create_campaign').inputSchema).toEqual(json(CreateCampaignBody));
    expect(advertised('track_conversion').inputSchema).toEqual(json(TrackBody));
    expect((advertised('get_funnel').inputSchema as any).properties.linkId).toMatchObject({ type: 'string', format: json(FunnelQuery).properties.linkId.format });
  });

  it('refuses what REST refuses with the same code and details: too many tags, a bad destination, a bad short ID', async () => {
    const checkRest = compileBodyValidator(CreateLinkBody);
    const tooManyTags = Array.from({ length: 21 }, (_, i) => `t${i}`);
    for (const args of [
      { destination: 'https://example.com/', tags: tooManyTags },
      { destination: 'https://example.com/a b' },
      { destination: 'x'.repeat(3000) },
      { destination: 'https://example.com/', shortId: 'a!', tags: ['ok', ''] },
    ]) {
      const rest = checkRest(structuredClone(args))!;
      const error = await toolError('create_link', args);
      expect(error.code, JSON.stringify(args).slice(0, 80)).toBe(rest.code);
      expect(error.code).toBe('validation_failed');
      expect(error.details).toEqual(rest.details);
      expect(error.requestId).toBe('req-1');
    }
    expect((await toolError('create_link', { destination: 'https://example.com/', tags: tooManyTags })).details).toEqual([{ path: '/tags', message: 'must NOT have more than 20 items' }]);
  });

  it('words unknown and missing arguments for a tool call', async () => {
    expect(await toolError('list_links', { q: 'x' })).toMatchObject({ code: 'unknown_field', details: [{ path: '/q', message: 'is not an argument of this tool' }] });
    expect(await toolError('create_link', {})).toMatchObject({ code: 'validation_failed', details: [{ path: '/destination' }] });
    expect(await toolError('create_link', { destination: 'https://example.com/', tags: ['a', 7] })).toMatchObject({ details: [{ path: '/tags/1' }] });
    expect(await toolError('get_analytics', { daysBack: 401 })).toMatchObject({ code: 'validation_failed', details: [{ path: '/daysBack' }] });
  });

  it('fills in defaults and lower-cases ids before a tool runs', () => {
    const check = (name: string, args: unknown) => catalog.get(name)!.checkArguments(args);
    expect(check('get_funnel', {})).toEqual({ ok: true, args: { daysBack: 30, includeBots: false } });
    expect(check('get_analytics', { linkId: 'ABCDEF01-0000-4000-8000-00000000000A' })).toEqual({
      ok: true,
      args: { daysBack: 30, includeBots: false, top: 5, linkId: 'abcdef01-0000-4000-8000-00000000000a' },
    });
    expect(check('list_links', {})).toEqual({ ok: true, args: { activeOnly: false, limit: 20 } });
    const given = { daysBack: 7 };
    check('get_report', given);
    expect(given).toEqual({ daysBack: 7 });
  });
});
