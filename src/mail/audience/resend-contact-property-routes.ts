// Resend's /contact-properties: the properties an organization declares, with a
// type and a fallback value (contact-properties.ts).
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { IdParams, Timestamp } from '../http/mail-schemas.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendListOf, ResendPageQuery } from '../resend/resend-pages.ts';
import { PROPERTY_NAME } from './contact-fields.ts';
import { PROPERTY_TYPES, toContactProperty, type ContactProperties, type PropertyType } from './contact-properties.ts';

const Fallback = Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Null()]);
const ResendContactProperty = Type.Object(
  { object: Type.Literal('contact_property'), id: Type.String(), key: Type.String(), type: StringEnum(PROPERTY_TYPES), fallback_value: Fallback, created_at: Timestamp() },
  { $id: 'ResendContactProperty', title: 'ResendContactProperty' },
);
const ResendContactPropertyList = ResendListOf(ref(ResendContactProperty), 'ResendContactPropertyList');
const ResendContactPropertyRef = Type.Object({ object: Type.Literal('contact_property'), id: Type.String() }, { $id: 'ResendContactPropertyRef', title: 'ResendContactPropertyRef' });
const ResendContactPropertyRemoved = Type.Object(
  { object: Type.Literal('contact_property'), id: Type.String(), deleted: Type.Literal(true) },
  { $id: 'ResendContactPropertyRemoved', title: 'ResendContactPropertyRemoved' },
);

/** 422 fallback_type_mismatch when the fallback is not of the property's type. */
function checkFallback(type: PropertyType, fallback: string | number | null | undefined): void {
  if (fallback !== undefined && fallback !== null && typeof fallback !== type) {
    throw new ApiError(422, 'fallback_type_mismatch', `fallback_value must be a ${type}, as the property.`, [{ path: '/fallback_value', message: `must be a ${type}` }]);
  }
}

export async function resendContactPropertyRoutes(app: App, deps: { contactProperties: ContactProperties; pg: Pool }): Promise<void> {
  const { contactProperties, pg } = deps;
  const tags = ['resend-contact-properties'];
  const config = { mailAccess: 'manage' as const };
  addComponents(app, [ResendContactProperty, ResendContactPropertyList, ResendContactPropertyRef, ResendContactPropertyRemoved]);

  const propertyOf = async (organizationId: string, id: string) => {
    const row = isUuid(id) ? await contactProperties.get(organizationId, id) : undefined;
    if (!row) throw notFound('contact property');
    return row;
  };

  app.post('/contact-properties', {
    config,
    schema: {
      tags, operationId: 'resendCreateContactProperty', summary: 'Declare a contact property',
      body: Type.Object({ key: Type.String({ pattern: PROPERTY_NAME.source, description: '1 to 64 of A-Z a-z 0-9 _ -.' }), type: StringEnum(PROPERTY_TYPES), fallback_value: Type.Optional(Fallback) }, { additionalProperties: false }),
      response: { 201: withRateLimitHeaders(ResendContactPropertyRef, 'Declared.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 409) },
    },
  }, async (request, reply) => {
    const { key, type, fallback_value: fallback = null } = request.body;
    checkFallback(type, fallback);
    const row = await contactProperties.create(request.mailAuth.organizationId, { key, type, fallback_value: fallback });
    if (!row) throw new ApiError(409, 'contact_property_exists', `The organization already declares ${key}.`);
    return reply.status(201).send({ object: 'contact_property' as const, id: row.id });
  });

  app.get('/contact-properties', {
    config,
    schema: { tags, operationId: 'resendListContactProperties', summary: 'List contact properties', querystring: ResendPageQuery, response: { 200: withRateLimitHeaders(ResendContactPropertyList, 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400) } },
  }, async (request) => resendPage(pg, contactProperties.listQuery(request.mailAuth.organizationId), request.query, toContactProperty));

  app.get('/contact-properties/:id', {
    config,
    schema: { tags, operationId: 'resendGetContactProperty', summary: 'Get a contact property', params: IdParams, response: { 200: withRateLimitHeaders(ResendContactProperty, 'The property.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => toContactProperty(await propertyOf(request.mailAuth.organizationId, request.params.id)));

  app.patch('/contact-properties/:id', {
    config,
    schema: {
      tags, operationId: 'resendUpdateContactProperty', summary: 'Change a property\'s fallback value', description: 'Its key and type do not change.', params: IdParams,
      body: Type.Object({ fallback_value: Type.Optional(Fallback) }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendContactPropertyRef, 'Updated.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404) },
    },
  }, async (request) => {
    const row = await propertyOf(request.mailAuth.organizationId, request.params.id);
    if (request.body.fallback_value !== undefined) {
      checkFallback(row.type, request.body.fallback_value);
      await contactProperties.setFallback(row.organization_id, row.id, request.body.fallback_value);
    }
    return { object: 'contact_property' as const, id: row.id };
  });

  app.delete('/contact-properties/:id', {
    config,
    schema: { tags, operationId: 'resendRemoveContactProperty', summary: 'Remove a contact property', description: 'Contacts keep their values.', params: IdParams, response: { 200: withRateLimitHeaders(ResendContactPropertyRemoved, 'Removed.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const row = await propertyOf(request.mailAuth.organizationId, request.params.id);
    await contactProperties.delete(row.organization_id, row.id);
    return { object: 'contact_property' as const, id: row.id, deleted: true as const };
  });
}
