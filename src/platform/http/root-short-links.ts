// Short links whose ID became a reserved path after they were made (Resend's root
// resources took /topics, /segments, /domains, … beside the links): the one product
// owns the path for API clients, the other for people following a link. A request
// to such a one-segment path (GET or HEAD) is the link's when
//   - its Host is a branded link domain: those hosts serve links only, so /topics
//     there is the link (or the link product's 404), never the mail API; or
//   - it carries no Authorization header and a link with that ID exists on the
//     host's domain: a visitor following an old short URL still gets there.
// Everything else (a key, or no such link) goes to the API route as before. The
// link product fills this in once its redirects are registered (ingress.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface ShortLinksAtRoot {
  /** Whether the Host is a branded link domain (it serves links only). */
  servesLinksOnly: (host: string | undefined) => boolean;
  /** Whether a link with this short ID exists on the Host's domain. */
  exists: (host: string | undefined, shortId: string) => Promise<boolean>;
  /** Answers as GET /:shortId does, the scan recorded once the response is sent. */
  answer: (request: FastifyRequest, reply: FastifyReply, shortId: string) => void | Promise<void>;
}

/** The first and only segment of a path (`/topics`, `/topics/`), or undefined. */
const singleSegment = (url: string): string | undefined => /^\/([^/?]+)\/?(?:\?.*)?$/.exec(url)?.[1];

export class RootShortLinks {
  private links: ShortLinksAtRoot | undefined;

  /** Set by the link product once its redirects are registered. */
  bind(links: ShortLinksAtRoot): void {
    this.links = links;
  }

  /**
   * An onRequest hook for a context of root routes: hands the request to the link when it is the
   * link's. On a branded link domain the API is never answered: a one-segment GET or HEAD is the
   * link's (or the domain's notFoundUrl), anything else the 404 of a path with no route.
   */
  readonly hook = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const links = this.links;
    if (!links) return;
    const shortId = request.method === 'GET' || request.method === 'HEAD' ? singleSegment(request.url) : undefined;
    const linkOnly = links.servesLinksOnly(request.host);
    if (linkOnly && shortId === undefined) {
      reply.callNotFound();
      return reply as never;
    }
    if (shortId === undefined) return;
    if (!linkOnly && (request.headers.authorization !== undefined || !(await links.exists(request.host, shortId)))) return;
    await links.answer(request, reply, shortId);
    return reply as never;
  };
}
