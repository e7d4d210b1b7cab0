// What a key may do with contacts, one function per operation, for
// /api/v1/contacts, Resend's /contacts and the MCP tools alike: the same address
// and property checks (declared types included), the same store, the same refusals.
import type { Static } from '@sinclair/typebox';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { page } from '../http/pagination.ts';
import { contactEmail, propertiesProblem, type PropertyValue } from './contact-fields.ts';
import { checkDeclaredTypes, type ContactProperties } from './contact-properties.ts';
import type { CreateContactBody, ListContactsQuery, UpdateContactBody } from './contact-schemas.ts';
import { mergedProperties } from './resend-contact-fields.ts';
import { toContact, type ContactJoins, type ContactRow, type Contacts } from './contacts.ts';

/** The stores a contact's writes need: its own, and the organization's declared properties (their types). */
export interface ContactStores {
  contacts: Contacts;
  contactProperties: ContactProperties;
}

const contactExists = () => new ApiError(409, 'contact_exists', 'The organization already has a contact with this email address.');

/** The contact named by id or address, or 404. */
export async function contactOf(contacts: Contacts, organizationId: string, idOrEmail: string): Promise<ContactRow> {
  const row = idOrEmail.includes('@') || isUuid(idOrEmail) ? await contacts.find(organizationId, idOrEmail) : undefined;
  if (!row) throw notFound('contact');
  return row;
}

function checkProperties(properties: Record<string, PropertyValue> | undefined): void {
  const problem = properties && propertiesProblem(properties);
  if (problem) throw new ApiError(400, 'invalid_properties', problem, [{ path: '/properties', message: problem }]);
}

function checkedEmail(value: string): string {
  const email = contactEmail(value);
  if (!email) throw new ApiError(400, 'invalid_email', 'email is not an email address.', [{ path: '/email', message: 'not an email address' }]);
  return email;
}

/** A new contact (with its segments and topic choices, in one statement); 409 contact_exists when the organization has the address. */
export async function createContact({ contacts, contactProperties }: ContactStores, organizationId: string, body: Static<typeof CreateContactBody>, joins?: ContactJoins) {
  checkProperties(body.properties);
  if (body.properties) checkDeclaredTypes(body.properties, await contactProperties.all(organizationId));
  const row = await contacts.create(organizationId, { ...body, email: checkedEmail(body.email) }, joins);
  if (!row) throw contactExists();
  // A segment or topic deleted between its check and the write: refused as one that never was, nothing made.
  if (row === 'segment_gone') throw new ApiError(422, 'segment_not_found', 'A segment of the contact was deleted meanwhile.', [{ path: '/segments', message: 'not found' }]);
  if (row === 'topic_gone') throw new ApiError(422, 'topic_not_found', 'A topic of the contact was deleted meanwhile.', [{ path: '/topics', message: 'not found' }]);
  return toContact(row);
}

/** A page of the organization's contacts, newest first, narrowed by address or status. */
export function listContacts(pg: Pool, contacts: Contacts, organizationId: string, query: Static<typeof ListContactsQuery>) {
  return page(pg, { ...contacts.listQuery(organizationId, query), limit: query.limit, cursor: query.cursor }, toContact);
}

/**
 * Changes the fields given (`properties` as a whole); 404 for no such contact, 409 contact_exists for
 * another contact's address. With `mergeProperties` (Resend's update), those are merged into the
 * contact's current properties under its row lock (null removes one), and the result must still
 * hold the limits.
 */
export async function updateContact({ contacts, contactProperties }: ContactStores, organizationId: string, idOrEmail: string, body: Static<typeof UpdateContactBody>, mergeProperties?: Record<string, PropertyValue>) {
  const row = await contactOf(contacts, organizationId, idOrEmail);
  checkProperties(body.properties);
  const given = mergeProperties ?? body.properties;
  if (given) checkDeclaredTypes(given, await contactProperties.all(row.organization_id));
  const email = body.email === undefined ? undefined : checkedEmail(body.email);
  const merge = mergeProperties && ((current: Record<string, PropertyValue>) => {
    const merged = mergedProperties(current, mergeProperties);
    checkProperties(merged);
    return merged;
  });
  const changed = await contacts.update(row.organization_id, row.id, { ...body, email }, merge);
  if (changed === 'contact_exists') throw contactExists();
  // Deleted since it was found.
  if (!changed) throw notFound('contact');
  return toContact(changed);
}

export async function deleteContact(contacts: Contacts, organizationId: string, idOrEmail: string) {
  const row = await contactOf(contacts, organizationId, idOrEmail);
  return toContact((await contacts.delete(row.organization_id, row.id)) ?? row);
}
