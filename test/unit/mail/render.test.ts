// Personalisation tags: values, fallbacks, escaping per part, and what is left alone.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderPart, tagProblems } from '../../../src/mail/templates/render.ts';

const contact = { email: 'ada@example.com', first_name: 'Ada', last_name: null, properties: { plan: 'pro', seats: 3, vip: true, nickname: '' } };

describe('renderPart', () => {
  it('fills contact fields and properties; a missing value renders empty', () => {
    expect(renderPart('Hi {{contact.first_name}} ({{ contact.email }}), plan {{contact.plan}}, {{contact.seats}} seats, vip {{contact.vip}}, [{{contact.last_name}}][{{contact.missing}}]', 'text', contact))
      .toBe('Hi Ada (ada@example.com), plan pro, 3 seats, vip true, [][]');
  });

  it('reads only the contact\'s own properties: Object.prototype\'s names render as missing', () => {
    expect(renderPart('[{{contact.constructor}}][{{contact.toString | "none"}}][{{contact.__proto__}}]', 'text', contact)).toBe('[][none][]');
  });

  it('uses the fallback when the value is missing or empty', () => {
    expect(renderPart('{{contact.last_name | "friend"}} {{contact.nickname|"pal"}} {{ contact.first_name | "x" }} {{contact.none | "say \\"hi\\" \\\\ there"}}', 'text', contact)).toBe('friend pal Ada say "hi" \\ there');
  });

  it('escapes values in HTML, keeps them in text, and puts no line break into a subject', () => {
    const c = { email: 'a@example.com', first_name: '<b>"Tom" & \'Jerry\'</b>\r\nBcc: x@y.z' };
    expect(renderPart('<p>{{contact.first_name}}</p>', 'html', c)).toBe('<p>&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;\r\nBcc: x@y.z</p>');
    expect(renderPart('{{contact.first_name}}', 'text', c)).toBe(c.first_name);
    expect(renderPart('Hello {{contact.first_name}}', 'subject', c)).not.toMatch(/[\r\n]/);
  });

  it('leaves other braces alone and lists them as problems', () => {
    expect(renderPart('{{unsubscribe}} {{contact.a b}} {{', 'html', contact)).toBe('{{unsubscribe}} {{contact.a b}} {{');
    expect(tagProblems('ok {{contact.x}} bad {{user.name}}')).toEqual([{ at: 21, tag: '{{user.name}}' }]);
  });

  it('never lets an HTML-special character of a value through unescaped (property)', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (value, around) => {
      const source = around.replace(/[{}]/g, '') + '{{contact.v}}';
      const out = renderPart(source, 'html', { email: 'a@b.co', properties: { v: value } });
      const inserted = out.slice(source.length - '{{contact.v}}'.length);
      expect(inserted).not.toMatch(/[<>"']/);
      expect(inserted.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&');
    }));
  });

  it('takes time linear in the input', () => {
    const start = process.hrtime.bigint();
    renderPart('{{'.repeat(200_000) + '{{contact.a | "' + '\\'.repeat(100_000), 'html', contact);
    renderPart('{{contact.x}}'.repeat(100_000), 'html', contact);
    expect(Number(process.hrtime.bigint() - start) / 1e6).toBeLessThan(5000);
  });
});
