// A mail MCP tool and who may use it. Each tool names the REST access of the
// routes it mirrors (auth/permissions.ts) and the kinds of key that list it;
// a kind is only ever given a tool whose access REST grants that kind, so
// nothing REST would refuse a key succeeds through MCP. A key of another kind
// does not see the tool, and calling it anyway is a tool error with REST's 403
// insufficient_permissions.
import type { TObject } from '@sinclair/typebox';
import { ApiError } from '../../platform/http/errors.ts';
import { defineTool, type McpTool, type ToolContext } from '../../platform/mcp/tool.ts';
import type { KeyKind, MailKeyGrant } from '../accounts/mail-keys.ts';
import { kindAllows, requireAccess, type MailAccess } from '../auth/permissions.ts';

/** A mail tool's caller: the key's grant (organization, kind, domains) besides the request. */
export interface MailToolContext extends ToolContext {
  grant: MailKeyGrant;
}

export type MailTool = McpTool<TObject, TObject, MailToolContext>;

export interface MailToolRule {
  /** The access of the REST routes the tool does the work of. */
  access: MailAccess;
  /** The kinds of key that see and may call it. */
  kinds: readonly KeyKind[];
}

const rules = new WeakMap<MailTool, MailToolRule>();

/** A tool with its rule; refuses at start-up a kind REST would not let do the work. */
export function mailTool<Input extends TObject, Output extends TObject>(rule: MailToolRule, tool: McpTool<Input, Output, MailToolContext>): MailTool {
  for (const kind of rule.kinds) {
    if (!kindAllows(kind, rule.access)) throw new Error(`mail tool ${tool.name}: a ${kind} key has no ${rule.access} access in REST`);
  }
  const defined = defineTool(tool);
  rules.set(defined, rule);
  return defined;
}

const ruleOf = (tool: MailTool): MailToolRule => {
  const rule = rules.get(tool);
  if (!rule) throw new Error(`mail tool ${tool.name} has no rule (define it with mailTool)`);
  return rule;
};

/** The kinds of key that may use the tool. */
export const kindsOf = (tool: MailTool): KeyKind[] => [...ruleOf(tool).kinds];

/** Why this key may not use the tool: REST's refusal of its access, else the tool's own kinds; undefined when it may. */
export function mailToolRefusal(tool: MailTool, ctx: MailToolContext): ApiError | undefined {
  const rule = ruleOf(tool);
  try {
    requireAccess(ctx.grant, rule.access);
  } catch (err) {
    return err as ApiError;
  }
  if (rule.kinds.includes(ctx.grant.kind)) return undefined;
  return new ApiError(403, 'insufficient_permissions', `A ${ctx.grant.kind} key cannot use ${tool.name} (it takes a ${rule.kinds.join(' or ')} key); tools/list names the tools this key may use.`);
}
