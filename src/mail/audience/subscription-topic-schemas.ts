// The TypeBox schemas of subscription topics (the API's /topics): the topic as
// answered, a contact's subscriptions, and the bodies and paths of
// subscription-topic-routes.ts. Component names keep the API's word (Topic, …).
import { Type } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import { Timestamp } from '../http/mail-schemas.ts';
import { PageOf } from '../http/pagination.ts';
import { DEFAULT_SUBSCRIPTIONS } from './subscription-topics.ts';

const Slug = Type.String({ pattern: '^[a-z0-9-]{1,64}$', description: '1 to 64 of a-z 0-9 -; unique in the organization.' });
export const TopicSchema = Type.Object(
  {
    object: Type.Literal('topic'),
    id: Type.String(),
    slug: Type.String(),
    name: Type.String(),
    default_subscription: StringEnum(DEFAULT_SUBSCRIPTIONS, { description: 'opt_in: every contact is subscribed until it opts out; opt_out: none is until it opts in.' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Topic', title: 'Topic' },
);
export const TopicList = PageOf(ref(TopicSchema), 'TopicList');
export const Subscription = Type.Object(
  { topic: ref(TopicSchema), subscribed: Type.Boolean({ description: 'The effective state.' }), explicit: Type.Boolean({ description: 'The contact chose it; false: the topic\'s default applies.' }) },
  { $id: 'TopicSubscription', title: 'TopicSubscription' },
);
export const SubscriptionList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ref(Subscription)) }, { $id: 'TopicSubscriptionList', title: 'TopicSubscriptionList' });
export const TopicParams = Type.Object({ topic: Type.String({ description: 'The topic\'s id or slug.' }) });
export const ContactTopicParams = Type.Object({ contact: Type.String({ description: 'The contact\'s id or email.' }), topic: Type.String({ description: 'The topic\'s id or slug.' }) });

export const CreateTopicBody = Type.Object({ slug: Slug, name: Name(120), default_subscription: StringEnum(DEFAULT_SUBSCRIPTIONS) }, { additionalProperties: false });
export const UpdateTopicBody = Type.Object({ name: Type.Optional(Name(120)), default_subscription: Type.Optional(StringEnum(DEFAULT_SUBSCRIPTIONS)) }, { additionalProperties: false, minProperties: 1 });
export const ContactParams = Type.Object({ contact: Type.String() });
export const ChooseTopicBody = Type.Object({ subscribed: Type.Boolean() }, { additionalProperties: false });
