/**
 * The SCIM 2.0 protocol layer (RFC 7643, RFC 7644; docs/scim.md). Resource types (/Users,
 * /Groups) are built on it; this file is the map for whoever adds one.
 *
 * 1. Declare the resource type's attributes (schema.ts): a `ScimSchema` of `attr(name, type,
 *    { mutability, returned, caseExact, uniqueness, multiValued, subAttributes })` entries
 *    (RFC 7643 §7 characteristics, RFC 7643 §2.2 defaults), and a `ScimResourceType` naming
 *    its endpoint, core schema and extensions. Add it to RESOURCE_TYPES so /ResourceTypes and
 *    /Schemas publish it (GROUP_TYPE / GROUP_SCHEMA are there already: members value, $ref,
 *    display, type; displayName required and unique).
 * 2. Filters: `parseListQuery(rt, ctx.query)` (list.ts) parses filter, startIndex, count,
 *    attributes, excludedAttributes (400 invalidFilter / invalidValue); or `parseFilter(rt,
 *    text)` (filter.ts) for the filter alone. `indexedEq(filter, ['id', 'displayName',
 *    'externalId'])` returns the `eq` term an indexed repository read answers; otherwise
 *    `scanPage(source, toResource, query)` evaluates the filter (`matches`) over keyset-paged
 *    batches of the tenant's rows (`source(afterRow, limit)`, your repository's keyset read).
 *    Both give { total, page }: render with `listResponse(page.map(r => project(rt, r,
 *    q.projection)), total, q.startIndex)` (render.ts).
 * 3. A resource: build its SCIM representation (`{ schemas, id, externalId, …}`), then
 *    `withMeta(rt, r, { base, created, lastModified, version })` sets meta (resourceType,
 *    created, lastModified, location, version = the weak ETag `W/"<version>"`; without
 *    `version` a hash of the representation is used). `etagOf(r)` is its ETag.
 * 4. Bodies: `checkBody(rt, body)` (values.ts) splits a POST/PUT body into typed core
 *    attributes, extensions and unknown ones (400 invalidValue naming a wrong type; booleans
 *    accept "True"/"False"; readOnly attributes dropped). PATCH: `applyPatch(rt, current,
 *    body)` (patch.ts) checks the PatchOp (op names without case, paths against the schema:
 *    invalidPath, readOnly: mutability) and applies it with scim-patch to `current`, your
 *    resource as GET renders it; pass the result to `checkBody`, then store it, in one
 *    transaction (the If-Match compare inside it: `checkIfMatch(header, etag)`, 412).
 *    A resource too large to render whole (a group's 50,000 members) can instead call
 *    `resolvePatchOps(rt, body)`: the same checks, each op resolved (`path.target`, the
 *    compiled value filter `path.filter`), applied by the caller (members add/remove by SQL).
 * 5. Errors: throw `scimError(status, scimType, detail)` or the helpers of errors.ts
 *    (invalidFilter, invalidValue, uniqueness (409), noSuchResource (404),
 *    preconditionFailed (412)); the error renderer answers them as RFC 7644 §3.12's object on
 *    every route declared with `errors: 'scim'` (also any other ApiError, 401/403 included).
 * 6. Routes: write `daemon/routes/scim/<resource>.ts` exporting a `ScimRouteModule` (see
 *    daemon/routes/scim/users.ts) and add it to SCIM_ROUTE_MODULES in
 *    daemon/routes/scim/index.ts. Each route is `api.add(router, { ...scimDeclaration(deps)
 *    (bearer with scope scim, tenant = the token's, SCIM errors, the scim+json body reader),
 *    method, path: `${SCIM_PREFIX}/Groups/:id`, summary, operationId, responses: { 200: ok(…),
 *    ...SCIM_ERRORS, 404: E404 } }, handler)`; answer with `sendResource(ctx, status, r,
 *    { created })` (ETag, Location, If-None-Match → 304) or `send(ctx, status, body)`.
 *    The bearer check also refuses a revoked long-lived SCIM token (tokens.ts); the body is
 *    in `ctx.request.body` (no zod body schema: SCIM's errors, not the guard's).
 * 7. A user as SCIM renders it: `userResource(row, base)` (user-map.ts); the readOnly `groups`
 *    attribute of a user is not rendered yet: a groups module that wants it adds it there.
 *    The services are `deps.scim.users` and `deps.scim.tokens` (services.ts).
 */
export * from './errors.js';
export * from './schema.js';
export * from './filter.js';
export * from './render.js';
export * from './list.js';
export * from './patch.js';
export * from './values.js';
export * from './discovery.js';
export * from './users.js';
export * from './tokens.js';
export * from './user-map.js';
