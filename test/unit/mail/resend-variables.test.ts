// Resend's template variables (src/mail/templates/resend-variables.ts) and the derived slugs of
// topics and templates made without one (src/mail/http/derived-slug.ts).
import { describe, expect, it } from 'vitest';
import { renderVariables, variablesOf, VARIABLE_INNER, VariablesTooLarge } from '../../../src/mail/templates/resend-variables.ts';
import { tagProblems } from '../../../src/mail/templates/render.ts';
import { slugCandidate, slugOf } from '../../../src/mail/http/derived-slug.ts';

const values: Record<string, string | number | null> = { NAME: 'Ada <admin>', TOTAL: 12.5, EMPTY: '', NOTHING: null, LINES: 'a\r\nb' };
const valueOf = (name: string) => values[name];

describe('renderVariables', () => {
  it('fills a value, else the tag\'s fallback, else nothing; escaped in html, one line in a subject', () => {
    expect(renderVariables('Hi {{{NAME}}}, {{{TOTAL}}} EUR', 'text', valueOf)).toBe('Hi Ada <admin>, 12.5 EUR');
    expect(renderVariables('<p>{{{ NAME }}}</p>', 'html', valueOf)).toBe('<p>Ada &lt;admin&gt;</p>');
    expect(renderVariables('{{{MISSING|friend}}} {{{EMPTY|there}}} {{{NOTHING|x}}} [{{{MISSING}}}]', 'text', valueOf)).toBe('friend there x []');
    expect(renderVariables('{{{X|"quoted fallback"}}}', 'text', valueOf)).toBe('quoted fallback');
    expect(renderVariables('{{{LINES}}}', 'subject', valueOf)).toBe('a b');
  });

  it('stops with VariablesTooLarge as soon as the output passes the limit, without building the whole', () => {
    const long = 'x'.repeat(4096);
    let calls = 0;
    const source = '{{{A}}}'.repeat(285_000);
    expect(() => renderVariables(source, 'html', () => { calls++; return long; }, 2 * 1024 * 1024)).toThrow(VariablesTooLarge);
    // 2 MB / 4 KB: it stopped after about 512 values, not 285,000.
    expect(calls).toBeLessThan(600);
    // At the limit exactly it is fine; a tag that shrinks the output counts as such.
    expect(renderVariables('ab{{{A}}}', 'text', () => 'cd', 4)).toBe('abcd');
    expect(() => renderVariables('ab{{{A}}}', 'text', () => 'cde', 4)).toThrow(VariablesTooLarge);
    expect(renderVariables('abcdefgh{{{A}}}', 'text', () => '', 8)).toBe('abcdefgh');
  });

  it('leaves the unsubscribe link for the sender, and other tags as they are', () => {
    expect(renderVariables('<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">x</a> {{contact.email}}', 'html', valueOf)).toBe('<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">x</a> {{contact.email}}');
    expect(variablesOf('{{{A}}} {{{B|b}}} {{{RESEND_UNSUBSCRIBE_URL}}}')).toEqual(['A', 'B']);
  });

  it('are tags a root template may publish; /api/v1 refuses them as before', () => {
    expect(tagProblems('{{{NAME}}} {{{NAME|there}}} {{contact.email}}', VARIABLE_INNER)).toEqual([]);
    expect(tagProblems('{{{NAME}}}')).toHaveLength(1);
    expect(tagProblems('{{{not a name}}}', VARIABLE_INNER)).toHaveLength(1);
  });
});

describe('slugOf', () => {
  it('lower-cases the name into a-z 0-9 and single dashes', () => {
    expect(slugOf('Product News!')).toBe('product-news');
    expect(slugOf('  Café — Mises à jour  ')).toBe('cafe-mises-a-jour');
    expect(slugOf('!!!')).toBe('topic');
    expect(slugOf('x'.repeat(100))).toHaveLength(56);
    expect([1, 2, 3].map((n) => slugCandidate('news', n))).toEqual(['news', 'news-2', 'news-3']);
  });
});
