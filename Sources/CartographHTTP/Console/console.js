// The Cartograph console (docs/console.md): one page whose views are chosen by the URL's fragment
// (#/t/acme/m/comics/…), each drawn from the API with the token the user signed in with. The token lives
// in this tab's sessionStorage only: never in a URL, never written to the console, sent only in the
// Authorization header of requests to this origin.
"use strict";

(() => {
  const main = document.getElementById("main");

  // MARK: Session

  const session = {
    get token() { return sessionStorage.getItem("cartograph.token"); },
    get tenant() { return sessionStorage.getItem("cartograph.tenant") || ""; },
    save(token, tenant) {
      sessionStorage.setItem("cartograph.token", token);
      sessionStorage.setItem("cartograph.tenant", tenant);
    },
    clear() {
      sessionStorage.removeItem("cartograph.token");
      sessionStorage.removeItem("cartograph.tenant");
    },
  };

  // MARK: DOM

  // An element: attributes by name (`class`, `href`, …; `on…` adds a listener; `text` sets the text),
  // then children (nodes or strings; null and false are skipped).
  function h(tag, attributes = {}, ...children) {
    return build(document.createElement(tag), attributes, children);
  }

  // An SVG element, the same way.
  function s(tag, attributes = {}, ...children) {
    return build(document.createElementNS("http://www.w3.org/2000/svg", tag), attributes, children);
  }

  function build(element, attributes, children) {
    for (const [name, value] of Object.entries(attributes)) {
      if (value === undefined || value === null || value === false) continue;
      if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
      else if (name === "text") element.textContent = value;
      else element.setAttribute(name, value === true ? "" : String(value));
    }
    element.append(...nodes(children));
    return element;
  }

  // Children as nodes: arrays flattened, null and false left out, the rest as text.
  function nodes(children) {
    return children.flat(Infinity).filter(child => child !== null && child !== undefined && child !== false)
      .map(child => child instanceof Node ? child : String(child));
  }

  function show(...children) { main.replaceChildren(...nodes(children)); }

  // A problem document (RFC 9457) or a failure to reach the server, as a box.
  function problemBox(error) {
    if (error instanceof ApiError) {
      const problem = typeof error.body === "object" && error.body ? error.body : { detail: String(error.body) };
      return h("div", { class: "problem", role: "alert" },
        h("strong", { text: `${error.status} ${problem.title || ""}` }), " ", problem.detail || "",
        problem.errors ? h("pre", { text: JSON.stringify(problem.errors, null, 2) }) : null);
    }
    return h("div", { class: "problem", role: "alert" }, h("strong", { text: "Request failed" }), " ", String(error.message || error));
  }

  function json(value) { return JSON.stringify(value, null, 2); }

  // A value in a table cell: strings as they are, everything else as JSON.
  function cell(value) {
    if (value === null || value === undefined) return h("span", { class: "note", text: "nil" });
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  // MARK: API

  class ApiError extends Error {
    constructor(status, body) {
      super(`HTTP ${status}`);
      this.status = status;
      this.body = body;
    }
  }

  function withQuery(path, query) {
    const parameters = new URLSearchParams();
    for (const [name, value] of Object.entries(query || {})) {
      if (value !== undefined && value !== null && value !== "") parameters.set(name, String(value));
    }
    const text = parameters.toString();
    return text ? `${path}?${text}` : path;
  }

  // One request to this server with the session's token; the answer parsed when it is JSON.
  // `headers`: more fields (an operation's header parameters, from the API reference).
  async function send(method, url, { body, contentType, signal, headers: more } = {}) {
    const headers = { Accept: "application/json, application/problem+json, */*", ...more };
    if (session.token) headers.Authorization = `Bearer ${session.token}`;
    if (body !== undefined) headers["Content-Type"] = contentType || "application/json";
    // By default a request belongs to the view that made it: leaving the view aborts it, so a slow
    // answer never draws over the next view.
    const response = await fetch(url, { method, headers, body, signal: signal || current.signal, cache: "no-store", credentials: "omit" });
    const text = await response.text();
    let parsed = text;
    if (/json/.test(response.headers.get("Content-Type") || "") && text !== "") {
      try { parsed = JSON.parse(text); } catch { parsed = text; }
    }
    return { status: response.status, ok: response.ok, contentType: response.headers.get("Content-Type") || "", body: parsed };
  }

  async function api(method, path, options = {}) {
    const answer = await send(method, withQuery(path, options.query), options);
    if (!answer.ok) throw new ApiError(answer.status, answer.body);
    return answer.body;
  }

  const enc = encodeURIComponent;
  const tenantPath = tenant => `/v1/tenants/${enc(tenant)}`;
  const modelPath = (tenant, model) => `${tenantPath(tenant)}/models/${enc(model)}`;
  const entityPath = (tenant, model, entity) => `${modelPath(tenant, model)}/entities/${enc(entity)}`;

  // The `{key}` path segment of an object: its identity value(s), each percent-encoded, joined by ','.
  function keySegment(key) {
    return (Array.isArray(key) ? key : [key]).map(part => enc(String(part))).join(",");
  }

  // The key of a listed object: its identification attributes' values, else its `_id`.
  function objectKey(entity, object) {
    const names = entity.identificationAttributes || [];
    if (names.length === 0 || names.some(name => object[name] === undefined || object[name] === null)) return object._id;
    return names.length === 1 ? object[names[0]] : names.map(name => object[name]);
  }

  function entityNamed(model, name) { return model.entities.find(entity => entity.name === name); }

  // The attributes and relationships of an entity, its ancestors' included.
  function properties(model, entity) {
    const chain = [];
    for (let ancestor = entity; ancestor; ancestor = ancestor.parent ? entityNamed(model, ancestor.parent) : null) chain.unshift(ancestor);
    return {
      attributes: chain.flatMap(e => e.attributes || []),
      relationships: chain.flatMap(e => e.relationships || []),
    };
  }

  // MARK: Links (the fragment holds the view; `{key}` segments are encoded a second time)

  const link = {
    tenant: tenant => `#/t/${enc(tenant)}`,
    model: (tenant, model) => `#/t/${enc(tenant)}/m/${enc(model)}`,
    objects: (tenant, model, entity, query) => withQuery(`#/t/${enc(tenant)}/m/${enc(model)}/e/${enc(entity)}`, query),
    object: (tenant, model, entity, key) => `#/t/${enc(tenant)}/m/${enc(model)}/e/${enc(entity)}/o/${enc(keySegment(key))}`,
    mapping: (tenant, model, mapping) => `#/t/${enc(tenant)}/m/${enc(model)}/map/${enc(mapping)}`,
    changes: (tenant, model) => `#/t/${enc(tenant)}/m/${enc(model)}/changes`,
  };

  // MARK: Views

  function signIn() {
    const token = h("input", { id: "signin-token", type: "password", autocomplete: "off", required: true, class: "wide" });
    const tenant = h("input", { id: "signin-tenant", type: "text", autocomplete: "off", placeholder: "acme", pattern: "[a-z0-9][a-z0-9_\\-]{0,62}" });
    const status = h("div");
    const form = h("form", { class: "signin", id: "signin" },
      h("h1", { text: "Sign in" }),
      h("p", { class: "note", text: "The token stays in this browser tab (sessionStorage) and is sent only in the Authorization header of this server's API." }),
      h("label", {}, "API key or admin token", token),
      h("label", {}, "Tenant (with the admin token only; leave it empty to list every tenant — a key knows its own)", tenant),
      h("div", {}, h("button", { type: "submit", id: "signin-submit", text: "Sign in" })),
      status);
    form.addEventListener("submit", async event => {
      event.preventDefault();
      const typed = tenant.value.trim();
      session.save(token.value.trim(), typed);
      try {
        // The token says who it is: a key its tenant (whatever was typed), the admin token any tenant.
        const identity = await api("GET", "/v1/key");
        const chosen = identity.admin ? typed : identity.tenant;
        session.save(token.value.trim(), chosen);
        // A request the token must be good for: the tenant's models, or (admin) the tenants.
        await api("GET", chosen ? `${tenantPath(chosen)}/models` : "/v1/tenants");
        location.hash = chosen ? link.tenant(chosen) : "#/tenants";
      } catch (error) {
        session.clear();
        status.replaceChildren(problemBox(error));
      }
    });
    show(form);
    token.focus();
  }

  async function tenants() {
    const list = await api("GET", "/v1/tenants");
    show(h("h1", { text: "Tenants" }),
      h("table", { id: "tenants" },
        h("tr", {}, h("th", { text: "Tenant" }), h("th", { text: "Created" }), h("th", { text: "Limits" })),
        list.items.map(tenant => h("tr", {},
          h("td", {}, h("a", { href: link.tenant(tenant.id), text: tenant.id })),
          h("td", { text: tenant.createdAt || "" }),
          h("td", { class: "mono", text: tenant.limits ? JSON.stringify(tenant.limits) : "" })))));
  }

  async function models(tenant) {
    // Webhooks (docs/webhooks.md) need a tenant admin key: they are asked for only with the admin token,
    // since a key's scope is not known without a request, and a refused one would show as an error.
    const [list, hooks] = await Promise.all([
      api("GET", `${tenantPath(tenant)}/models`),
      session.token.startsWith("cg_") ? null : api("GET", `${tenantPath(tenant)}/webhooks`)]);
    show(h("h1", { text: `Models of ${tenant}` }),
      list.items.length === 0 ? h("p", { class: "note", text: "No model yet: PUT one (see the API reference)." }) :
        h("table", { id: "models" },
          h("tr", {}, h("th", { text: "Model" }), h("th", { text: "Version" }), h("th", { text: "Entities" })),
          list.items.map(model => h("tr", {},
            h("td", {}, h("a", { href: link.model(tenant, model.name), text: model.name })),
            h("td", { text: model.version }), h("td", { text: model.entities })))),
      hooks && hooks.items.length > 0 ? webhooks(hooks.items) : null);
  }

  // A tenant's webhooks and their state (R-W1, R-W3).
  function webhooks(items) {
    return [h("h2", { text: "Webhooks" }),
      h("table", { id: "webhooks" },
        h("tr", {}, h("th", { text: "Webhook" }), h("th", { text: "URL" }), h("th", { text: "Models" }), h("th", { text: "State" }),
          h("th", { text: "Failures in a row" })),
        items.map(hook => h("tr", {},
          h("td", { text: hook.name }), h("td", { class: "mono", text: hook.url }),
          h("td", { text: hook.models.map(model => model.entities.length ? `${model.name} (${model.entities.join(", ")})` : model.name).join(", ") }),
          h("td", { text: hook.state === "disabled" ? `disabled: ${hook.disabledReason || ""}` : hook.state }),
          h("td", { text: hook.consecutiveFailures }))))];
  }

  async function model(tenant, name) {
    const [document, mappings] = await Promise.all([
      api("GET", modelPath(tenant, name)), api("GET", `${modelPath(tenant, name)}/mappings`)]);
    // Each entity's count (its sub-entities' objects included): one page of one object, counted.
    const counts = await Promise.all(document.entities.map(entity => entity.abstract ? null
      : api("GET", `${entityPath(tenant, name, entity.name)}/objects`, { query: { limit: 1, count: "true" } }).then(page => page.total, () => null)));
    show(h("h1", { text: `Model ${name}` }),
      h("p", {}, `Version ${document.version}. `, h("a", { href: link.changes(tenant, name), id: "follow-changes", text: "Follow its change feed" })),
      h("h2", { text: "Entities" }),
      diagram(tenant, name, document),
      h("ul", { id: "entities" }, document.entities.map((entity, index) => h("li", {},
        h("a", { href: link.objects(tenant, name, entity.name), text: entity.name }),
        entity.abstract ? " (abstract)" : "",
        counts[index] === null ? null : h("span", { class: "count", "data-entity": entity.name, text: ` ${counts[index]} object${counts[index] === 1 ? "" : "s"}` }),
        entity.identificationAttributes && entity.identificationAttributes.length
          ? h("span", { class: "note", text: ` identified by ${entity.identificationAttributes.join(", ")}` }) : null))),
      h("h2", { text: "Mappings" }),
      mappings.items.length === 0 ? h("p", { class: "note", text: "No mapping yet." }) :
        h("ul", { id: "mappings" }, mappings.items.map(mapping => h("li", {},
          h("a", { href: link.mapping(tenant, name, mapping.name), text: mapping.name }), ` → ${mapping.entity}`))));
  }

  // The entities as boxes of their attributes and relationships, joined by a line per relationship
  // (dashed when to-many; dotted to a parent entity). Each box links to the entity's objects.
  function diagram(tenant, modelName, document) {
    const entities = document.entities;
    const columns = Math.max(1, Math.ceil(Math.sqrt(entities.length)));
    const width = 260, line = 16, gapX = 90, gapY = 50;
    const heights = entities.map(e => line * (2 + (e.attributes || []).length + (e.relationships || []).length) + 8);
    const rows = Math.ceil(entities.length / columns);
    const rowHeights = Array.from({ length: rows }, (_, row) => Math.max(...heights.slice(row * columns, row * columns + columns)));
    const boxes = new Map();
    entities.forEach((entity, index) => {
      const row = Math.floor(index / columns), column = index % columns;
      const y = 20 + rowHeights.slice(0, row).reduce((sum, height) => sum + height + gapY, 0);
      boxes.set(entity.name, { x: 20 + column * (width + gapX), y, height: heights[index] });
    });
    const totalWidth = 40 + columns * width + (columns - 1) * gapX;
    const totalHeight = 40 + rowHeights.reduce((sum, height) => sum + height + gapY, 0) - gapY;
    const center = box => [box.x + width / 2, box.y + box.height / 2];
    const edges = [], drawn = new Set();
    for (const entity of entities) {
      const from = boxes.get(entity.name);
      for (const relationship of entity.relationships || []) {
        const to = boxes.get(relationship.destination);
        const pair = [entity.name, relationship.destination].sort().join("\u0000");
        if (!to || drawn.has(pair)) continue;
        drawn.add(pair);
        const [x1, y1] = center(from), [x2, y2] = center(to);
        edges.push(s("path", { class: relationship.toMany ? "edge many" : "edge",
          d: entity.name === relationship.destination
            ? `M${from.x + width} ${y1 - 10} h30 v20 h-30` : `M${x1} ${y1} L${x2} ${y2}` },
          s("title", { text: `${entity.name}.${relationship.name} → ${relationship.destination}${relationship.toMany ? " (to-many)" : ""}` })));
      }
      if (entity.parent && boxes.has(entity.parent)) {
        const [x1, y1] = center(from), [x2, y2] = center(boxes.get(entity.parent));
        edges.push(s("path", { class: "edge parent", d: `M${x1} ${y1} L${x2} ${y2}` }, s("title", { text: `${entity.name} inherits from ${entity.parent}` })));
      }
    }
    const nodes = entities.map(entity => {
      const box = boxes.get(entity.name);
      const lines = [
        ...(entity.attributes || []).map(a => `${a.name}: ${a.type}${a.optional === false ? "" : "?"}`),
        ...(entity.relationships || []).map(r => `${r.name} → ${r.destination}${r.toMany ? " [*]" : ""}`),
      ];
      return s("a", { href: link.objects(tenant, modelName, entity.name), class: "entity", "data-entity": entity.name },
        s("rect", { class: "box", x: box.x, y: box.y, width, height: box.height, rx: 4 }),
        s("rect", { class: "title", x: box.x, y: box.y, width, height: line + 6, rx: 4 }),
        s("text", { class: "title-text", x: box.x + 8, y: box.y + line }, entity.name + (entity.parent ? ` : ${entity.parent}` : "")),
        lines.map((text, index) => s("text", { x: box.x + 8, y: box.y + line * (index + 2) + 6 }, text)));
    });
    return s("svg", { class: "diagram", id: "diagram", viewBox: `0 0 ${totalWidth} ${totalHeight}`, width: totalWidth, height: totalHeight,
      role: "img", "aria-label": "Entity diagram" }, edges, nodes);
  }

  async function objects(tenant, modelName, entityName, query) {
    const document = await api("GET", modelPath(tenant, modelName));
    const entity = entityNamed(document, entityName);
    if (!entity) throw new Error(`The model has no entity ${entityName}.`);
    const { attributes, relationships } = properties(document, entity);
    // An entity with searchable attributes gets a search box (R-Q6): matches by rank, each with its excerpt.
    const searchable = attributes.some(a => a.searchable);
    const searching = searchable ? query.get("search") : null;
    // Facets (R-Q8): key paths whose commonest values are counted over every match.
    const faceted = query.get("facets") || null;
    // Group by (R-Q9): key paths whose groups are counted over every match, with optional aggregates.
    const grouping = { groupBy: query.get("groupBy") || null, aggregates: query.get("aggregates") || null, groups: query.get("groups") || null };
    // A refused filter (a 400: a bad predicate or order) is shown under the form, which keeps what was typed.
    let page = null, refusal = null;
    try {
      page = await api("GET", `${entityPath(tenant, modelName, entityName)}/objects`, {
        query: { where: query.get("where"), search: searching, orderBy: query.get("orderBy"), limit: query.get("limit") || 25,
          cursor: query.get("cursor"), count: "true", facets: faceted,
          fields: searching ? attributes.concat(relationships).map(p => p.name).concat("_snippet").join(",") : null },
      });
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      refusal = error;
    }
    // The groups of the same filter and search; a refused grouping is shown under its own form.
    let groups = null, groupRefusal = null;
    if (grouping.groupBy && !refusal) {
      try {
        groups = await api("POST", `${entityPath(tenant, modelName, entityName)}/aggregate`, {
          body: JSON.stringify(aggregateBody(grouping, query.get("where"), searching)) });
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 400) throw error;
        groupRefusal = error;
      }
    }
    const where = h("input", { id: "where", name: "where", class: "wide", placeholder: "name BEGINSWITH[c] 'spider'", value: query.get("where") || "" });
    const orderBy = h("input", { id: "orderBy", name: "orderBy", placeholder: "-name", value: query.get("orderBy") || "" });
    const limit = h("input", { id: "limit", name: "limit", type: "number", min: 1, max: 1000, value: query.get("limit") || 25 });
    const search = searchable
      ? h("input", { id: "search", name: "search", class: "wide", placeholder: "words, \"a phrase\", prefix*, OR, -word", value: query.get("search") || "" })
      : null;
    const facets = h("input", { id: "facets", name: "facets", placeholder: "state, author.name, tags.name", value: faceted || "" });
    const form = h("form", { class: "inline", id: "filter" },
      search ? h("label", {}, "Search", search) : null,
      h("label", {}, "Predicate (where)", where), h("label", {}, "Order by", orderBy), h("label", {}, "Page size", limit),
      h("label", {}, "Facets", facets),
      h("button", { type: "submit", id: "apply", text: "Apply" }));
    form.addEventListener("submit", event => {
      event.preventDefault();
      location.hash = link.objects(tenant, modelName, entityName, { search: search ? search.value.trim() : "", where: where.value.trim(),
        orderBy: orderBy.value.trim(), limit: limit.value, facets: facets.value.replace(/\s+/g, ""), ...grouping });
    });
    const sameFilter = { search: searching, where: query.get("where"), orderBy: query.get("orderBy"), limit: query.get("limit"), facets: faceted, ...grouping };
    const groupForm = groupByForm(grouping, chosen => { location.hash = link.objects(tenant, modelName, entityName, { ...sameFilter, ...chosen }); });
    const heading = h("h1", {}, h("a", { href: link.model(tenant, modelName), text: modelName }), ` / ${entityName}`);
    if (refusal) {
      show(heading, form, h("div", { id: "filter-problem" }, problemBox(refusal)), groupForm);
      return;
    }
    // A column's header orders by it: ascending first, then descending (the first sort key only).
    const sorted = (query.get("orderBy") || "").split(",")[0].trim();
    const sortLink = name => {
      const descending = sorted === name;
      const mark = sorted === name ? " ▲" : sorted === `-${name}` ? " ▼" : "";
      return h("a", { class: "sort", "data-sort": name, href: link.objects(tenant, modelName, entityName, { ...sameFilter, orderBy: descending ? `-${name}` : name }),
        text: name + mark });
    };
    show(heading,
      form,
      (page.warnings || []).map(warning => h("p", { class: "note warning", text: `Note: ${warning.message}` })),
      h("p", { id: "total", text: `${page.total} object${page.total === 1 ? "" : "s"} match.` }, " ",
        downloadButton(entityPath(tenant, modelName, entityName), entityName, sameFilter)),
      page.facets ? facetLists(page.facets, relationships, query.get("where"), where => link.objects(tenant, modelName, entityName, { ...sameFilter, where })) : null,
      groupForm,
      groupRefusal ? h("div", { id: "group-problem" }, problemBox(groupRefusal)) : null,
      groups ? groupTable(groups, grouping) : null,
      h("table", { id: "objects" },
        h("tr", {}, h("th", { text: "Key" }), attributes.map(a => h("th", {}, sortLink(a.name))), relationships.map(r => h("th", { text: `${r.name} →` })),
          searching ? h("th", { text: "Match" }) : null),
        page.items.map(object => {
          // A sub-entity's object (listed under its parent) is keyed and opened as its own entity.
          const own = entityNamed(document, object._entity) || entity;
          const key = objectKey(own, object);
          return h("tr", {},
            h("td", {}, h("a", { class: "object-link", href: link.object(tenant, modelName, own.name, key), text: JSON.stringify(key) })),
            attributes.map(a => h("td", {}, cell(object[a.name]))),
            relationships.map(r => h("td", {}, relationshipLinks(tenant, modelName, r, object[r.name]))),
            searching ? h("td", { class: "snippet" }, snippet(object._snippet)) : null);
        })),
      h("div", { class: "pager" },
        query.get("cursor") ? h("a", { id: "first-page", href: link.objects(tenant, modelName, entityName, sameFilter), text: "← First page" }) : null,
        page.next ? h("a", { id: "next-page", href: link.objects(tenant, modelName, entityName, { ...sameFilter, cursor: page.next }), text: "Next page →" }) : null));
  }

  // "Group by" (R-Q9): key paths (comma-separated), aggregates beside the count (`sum:comments, max:updatedAt`)
  // and how many groups; kept in the fragment, so a refused grouping keeps what was typed.
  function groupByForm(grouping, apply) {
    const keyPaths = h("input", { id: "group-by", name: "groupBy", placeholder: "state, author.login", value: grouping.groupBy || "" });
    const aggregates = h("input", { id: "group-aggregates", name: "aggregates", placeholder: "sum:comments, max:updatedAt", value: grouping.aggregates || "" });
    const groups = h("input", { id: "group-limit", name: "groups", type: "number", min: 1, max: 1000, value: grouping.groups || 20 });
    const form = h("form", { class: "inline", id: "group-form" },
      h("label", {}, "Group by", keyPaths), h("label", {}, "Aggregates (count and …)", aggregates), h("label", {}, "Groups", groups),
      h("button", { type: "submit", id: "group", text: "Group" }));
    form.addEventListener("submit", event => {
      event.preventDefault();
      apply({ groupBy: keyPaths.value.replace(/\s+/g, ""), aggregates: aggregates.value.replace(/\s+/g, ""), groups: groups.value });
    });
    return form;
  }

  // The aggregate route's body: each aggregate named as written, beside `count`, the largest groups first.
  function aggregateBody(grouping, where, search) {
    const aggregates = { count: "count" };
    for (const written of aggregateNames(grouping)) aggregates[written] = written;
    return { where: where || undefined, search: search || undefined, groupBy: grouping.groupBy.split(","), aggregates,
      orderBy: ["-count"], limit: Number(grouping.groups || 20) };
  }

  function aggregateNames(grouping) { return (grouping.aggregates || "").split(",").filter(name => name && name !== "count"); }

  // The groups as a table: their key paths' values, the count, each aggregate; `more` as a note.
  function groupTable(result, grouping) {
    const keyPaths = grouping.groupBy.split(","), names = ["count", ...aggregateNames(grouping)];
    return h("div", { id: "groups" },
      h("table", {},
        h("tr", {}, keyPaths.map(keyPath => h("th", { text: keyPath })), names.map(name => h("th", { class: "aggregate", text: name }))),
        result.groups.map(group => h("tr", { class: "group" },
          keyPaths.map(keyPath => h("td", {}, cell(group[keyPath]))), names.map(name => h("td", { class: "aggregate" }, cell(group[name])))))),
      result.more ? h("p", { class: "note", id: "more-groups", text: "More groups not shown: raise Groups to see them." }) : null);
  }

  // Each facet's values with their counts (R-Q8); a value narrows the filter to it (a to-many through ANY).
  function facetLists(facets, relationships, where, linkTo) {
    return h("div", { id: "facets" }, Object.entries(facets).map(([keyPath, facet]) => {
      const toMany = relationships.some(r => r.toMany && r.name === keyPath.split(".")[0]);
      const literal = value => value === null ? "nil" : typeof value === "string" ? JSON.stringify(value) : String(value);
      const condition = value => `${toMany ? "ANY " : ""}${keyPath} == ${literal(value)}`;
      return h("section", { class: "facet", "data-facet": keyPath },
        h("h3", { text: keyPath }),
        h("ul", {}, facet.values.map(entry => h("li", {},
          h("a", { class: "facet-value", href: linkTo(where ? `(${where}) AND ${condition(entry.value)}` : condition(entry.value)),
            text: entry.value === null ? "nil" : String(entry.value) }),
          h("span", { class: "count", text: ` ${entry.count}` }))),
          facet.otherValues ? h("li", { class: "note", text: `${facet.otherValues} more value${facet.otherValues === 1 ? "" : "s"} (${facet.otherCount})` }) : null));
    }));
  }

  // "Download CSV": every object the filter matches, in one streamed CSV answer (R-Q7), saved as a file.
  function downloadButton(path, entityName, filter) {
    const status = h("span", { id: "download-status" });
    const button = h("button", { type: "button", id: "download-csv", text: "Download CSV" });
    button.addEventListener("click", async () => {
      status.replaceChildren("Downloading…");
      const answer = await send("GET", withQuery(`${path}/objects`, { search: filter.search, where: filter.where, orderBy: filter.orderBy, limit: 1000000000 }),
        { headers: { Accept: "text/csv" } });
      if (!answer.ok) return status.replaceChildren(problemBox(new ApiError(answer.status, answer.body)));
      const file = `${entityName}.csv`;
      const address = URL.createObjectURL(new Blob([answer.body], { type: "text/csv" }));
      h("a", { href: address, download: file }).click();
      setTimeout(() => URL.revokeObjectURL(address), 1000);
      const rows = csvRowCount(answer.body) - 1;
      status.replaceChildren(`Saved ${file}: ${rows} object${rows === 1 ? "" : "s"}.`);
    });
    return h("span", {}, button, " ", status);
  }

  // The rows of a CSV text (RFC 4180: a line break inside quotes is part of its cell).
  function csvRowCount(text) {
    let rows = 0, quoted = false;
    for (let index = 0; index < text.length; index++) {
      if (text[index] === '"') quoted = !quoted;
      else if (text[index] === "\n" && !quoted) rows++;
    }
    return rows;
  }

  // A search's excerpt (R-Q6) as text, the matched words in <mark> elements: never parsed as HTML.
  function snippet(text) {
    return (text || "").split(/(<mark>.*?<\/mark>)/s).map(part =>
      part.startsWith("<mark>") && part.endsWith("</mark>") ? h("mark", { text: part.slice(6, -7) }) : part);
  }

  // A relationship's value (shape=model: the destination's key, an array of keys when to-many) as links.
  function relationshipLinks(tenant, modelName, relationship, value) {
    if (value === null || value === undefined) return h("span", { class: "note", text: "nil" });
    const keys = relationship.toMany ? value : [value];
    return h("span", { class: "relationship", "data-relationship": relationship.name }, keys.flatMap((key, index) => [
      index ? ", " : null,
      h("a", { href: link.object(tenant, modelName, relationship.destination, key), text: JSON.stringify(key) })]));
  }

  async function object(tenant, modelName, entityName, keyText) {
    const [document, found] = await Promise.all([
      api("GET", modelPath(tenant, modelName)),
      api("GET", `${entityPath(tenant, modelName, entityName)}/objects/${keyText}`)]);
    const entity = entityNamed(document, found._entity || entityName) || entityNamed(document, entityName);
    const { attributes, relationships } = properties(document, entity);
    show(h("h1", {}, h("a", { href: link.model(tenant, modelName), text: modelName }), " / ",
        h("a", { href: link.objects(tenant, modelName, entity.name), text: entity.name }), ` ${decodeURIComponent(keyText)}`),
      found._stub ? h("p", { class: "note", text: "A stub: only its key is known so far." }) : null,
      h("table", { id: "object" },
        h("tr", {}, h("th", { text: "_id" }), h("td", { text: found._id })),
        attributes.map(a => h("tr", { "data-attribute": a.name }, h("th", { text: a.name }), h("td", {}, cell(found[a.name])))),
        relationships.map(r => h("tr", { "data-relationship": r.name },
          h("th", { text: `${r.name} → ${r.destination}${r.toMany ? " (to-many)" : ""}` }),
          h("td", {}, relationshipLinks(tenant, modelName, r, found[r.name]))))),
      h("h2", { text: "As JSON" }), h("pre", { text: json(found) }));
  }

  async function mapping(tenant, modelName, mappingName) {
    const [document, kept] = await Promise.all([
      api("GET", `${modelPath(tenant, modelName)}/mappings/${enc(mappingName)}`),
      api("GET", `${modelPath(tenant, modelName)}/mappings/${enc(mappingName)}/drift`)]);
    // R-P16: where a fetcher resumes, per scope, when the mapping keeps a cursor.
    const cursor = document.cursor ? await api("GET", `${modelPath(tenant, modelName)}/mappings/${enc(mappingName)}/cursor`) : null;
    // R-P18: the payloads it keeps and the objects they discarded, when the mapping archives.
    const mappingBase = `${modelPath(tenant, modelName)}/mappings/${enc(mappingName)}`;
    const [archived, letters] = document.archive
      ? await Promise.all([api("GET", `${mappingBase}/archive`, { query: { limit: 50 } }), api("GET", `${mappingBase}/dead-letters`, { query: { limit: 50 } })])
      : [null, null];
    const payload = h("textarea", { id: "payload", spellcheck: "false", placeholder: '{"results": [...]}' });
    const result = h("div", { id: "dry-run-result" });
    const form = h("form", { id: "dry-run-form" },
      h("label", {}, "A payload as the API returned it (JSON)", payload),
      h("p", {}, h("button", { type: "submit", id: "dry-run", text: "Dry run with trace" }),
        h("span", { class: "note", text: " POST …/payloads?explain=true: maps the payload and stores nothing." })));
    form.addEventListener("submit", async event => {
      event.preventDefault();
      result.replaceChildren(h("p", { class: "note", text: "Running…" }));
      try {
        const answer = await api("POST", `${modelPath(tenant, modelName)}/mappings/${enc(mappingName)}/payloads`,
          { query: { explain: "true" }, body: payload.value });
        result.replaceChildren(dryRunReport(answer));
      } catch (error) {
        result.replaceChildren(problemBox(error));
      }
    });
    show(h("h1", {}, h("a", { href: link.model(tenant, modelName), text: modelName }), ` / mapping ${mappingName}`),
      h("pre", { id: "mapping-document", text: json(document) }),
      cursor ? [h("h2", { text: `Cursor: ${cursor.attribute}` }), cursorTable(cursor)] : null,
      archived ? archiveSection(mappingBase, document.archive.days, archived, letters) : null,
      h("h2", { text: "Drift" }),
      kept.drift.length === 0
        ? h("p", { id: "mapping-drift", class: "note", text: "No committed payload held a key this mapping does not read, or a value of another type." })
        : driftTable("mapping-drift", kept.drift, true),
      h("h2", { text: "Try a payload" }), form, result);
  }

  // The archived payloads (newest listed first), the dead letters, and a dry-run replay of what is listed (R-P18).
  function archiveSection(mappingBase, days, archived, letters) {
    const outcome = h("div", { id: "replay-result" });
    const ids = archived.items.map(item => item.id);
    const replay = h("button", { type: "button", id: "replay-dry-run", text: "Replay these through the mapping as it is now (dry run)" });
    replay.addEventListener("click", async () => {
      outcome.replaceChildren(h("p", { class: "note", text: "Running…" }));
      try {
        const answer = await api("POST", `${mappingBase}/replay`, { query: { dryRun: "true" }, body: JSON.stringify({ from: Math.min(...ids), to: Math.max(...ids) }) });
        outcome.replaceChildren(h("table", { id: "replay", class: "trace" },
          h("tr", {}, ["payload", "inserted", "updated", "unchanged", "deleted", "discarded"].map(name => h("th", { text: name }))),
          answer.replayed.map(entry => h("tr", {}, [entry.archiveId, entry.inserted, entry.updated, entry.unchanged, entry.deleted, entry.discarded]
            .map(value => h("td", { text: value }))))));
      } catch (error) {
        outcome.replaceChildren(problemBox(error));
      }
    });
    return [h("h2", { text: `Archive (kept ${days} day${days === 1 ? "" : "s"})` }),
      archived.items.length === 0 ? h("p", { id: "mapping-archive", class: "note", text: "No payload archived yet." }) : [
        h("table", { id: "mapping-archive", class: "trace" },
          h("tr", {}, ["payload", "received", "bytes", "kept", "changeSeq", "mapping version"].map(name => h("th", { text: name }))),
          archived.items.map(item => h("tr", {}, h("td", { text: item.id }), h("td", { text: item.receivedAt }), h("td", { text: item.bytes }),
            h("td", { text: item.storedBytes }), h("td", { text: item.changeSeq }), h("td", { class: "mono", text: item.mappingVersion })))),
        h("p", {}, replay), outcome],
      h("h2", { text: "Dead letters" }),
      letters.items.length === 0 ? h("p", { id: "dead-letters", class: "note", text: "No object was discarded." }) :
        h("table", { id: "dead-letters", class: "trace" },
          h("tr", {}, ["payload", "pointer", "reasons", "representation"].map(name => h("th", { text: name }))),
          letters.items.map(letter => h("tr", {}, h("td", { text: letter.archiveId }), h("td", { text: letter.pointer }),
            h("td", { text: letter.reasons.map(reason => reason.message).join("; ") }), h("td", { class: "mono", text: JSON.stringify(letter.representation) }))))];
  }

  // The greatest committed value of the mapping's cursor attribute, per scope (R-P16).
  function cursorTable(cursor) {
    if (cursor.cursors.length === 0) return h("p", { id: "mapping-cursor", class: "note", text: "No payload has committed a value yet." });
    return h("table", { id: "mapping-cursor", class: "trace" },
      h("tr", {}, cursor.scope.concat(["value", "updated"]).map(name => h("th", { text: name }))),
      cursor.cursors.map(entry => h("tr", {},
        cursor.scope.map(name => h("td", {}, cell(entry.scope[name]))),
        h("td", {}, cell(entry.value)), h("td", { text: entry.updatedAt }))));
  }

  // Where payloads drifted from the mapping (R-P17): keys it does not read, values of another JSON type.
  function driftTable(id, drift, seen) {
    return h("table", { id, class: "trace" },
      h("tr", {}, ["path", "drift", "count", "example"].concat(seen ? ["first seen", "last seen"] : []).map(name => h("th", { text: name }))),
      drift.map(entry => h("tr", {},
        h("td", { text: entry.path }),
        h("td", { text: entry.kind === "unread" ? "not read" : `a ${entry.found} where a ${entry.expected} is taken` }),
        h("td", { text: entry.count }), h("td", { text: entry.example }),
        seen ? [h("td", { text: entry.firstSeen }), h("td", { text: entry.lastSeen })] : [])));
  }

  // What a dry run would have done: the counts, then the trace object by object.
  function dryRunReport(answer) {
    const counts = ["inserted", "updated", "unchanged", "deleted"].map(name => `${answer[name] || 0} ${name}`).join(", ");
    const trace = answer.explain || [];
    const columns = [...new Set(trace.flatMap(step => Object.keys(step)))];
    return h("div", {},
      h("p", { id: "dry-run-counts" }, h("strong", { text: answer.dryRun ? "Dry run: nothing was stored. " : "" }), `Would be ${counts}.`),
      (answer.warnings || []).map(warning => h("div", { class: "problem" }, h("strong", { text: "Warning " }), `${warning.pointer}: ${warning.message}`)),
      answer.drift ? [h("h2", { text: "Drift" }), driftTable("dry-run-drift", answer.drift, false)] : null,
      h("h2", { text: `Trace (${trace.length} step${trace.length === 1 ? "" : "s"})` }),
      h("table", { id: "trace", class: "trace" },
        h("tr", {}, h("th", { text: "#" }), columns.map(name => h("th", { text: name }))),
        trace.map((step, index) => h("tr", {}, h("td", { text: index + 1 }),
          columns.map(name => h("td", {}, name === "action" ? h("span", { class: `action ${step[name]}`, text: step[name] }) : cell(step[name])))))),
      answer.timings ? h("p", { class: "note", text: `Timings (ms): ${Object.entries(answer.timings).map(([phase, ms]) => `${phase} ${ms}`).join(", ")}` }) : null);
  }

  // The change feed, followed live: pages up to the head, then long polls (wait=30) that the server
  // answers as soon as a write commits. Newest first; stops when the view is left.
  async function changes(tenant, modelName, signal) {
    const list = h("ol", { id: "feed", class: "feed", reversed: true });
    const state = h("p", { id: "feed-state", class: "note", text: "Reading the feed…" });
    const error = h("div");
    show(h("h1", {}, h("a", { href: link.model(tenant, modelName), text: modelName }), " / change feed"), state, error, list);
    const limit = 100;
    let since = 0, epoch = null, caughtUp = false;
    while (!signal.aborted) {
      let page;
      try {
        page = await api("GET", `${modelPath(tenant, modelName)}/changes`, { query: { since, limit, wait: caughtUp ? 30 : 0 }, signal });
      } catch (failure) {
        if (signal.aborted) return;
        error.replaceChildren(problemBox(failure));
        state.textContent = "Stopped following. Open the view again to retry.";
        return;
      }
      if (epoch !== null && page.epoch !== epoch) {
        // The store was created anew or restored from an older copy (R-D7): start again from 0.
        list.replaceChildren();
        since = 0; epoch = page.epoch; caughtUp = false;
        continue;
      }
      epoch = page.epoch;
      for (const change of page.changes) list.prepend(changeItem(tenant, modelName, change, caughtUp));
      while (list.children.length > 500) list.lastChild.remove();
      since = page.next;
      caughtUp = page.changes.length < limit;
      state.textContent = `Following live after sequence ${since}: new writes appear at the top.`;
    }
  }

  function changeItem(tenant, modelName, change, fresh) {
    return h("li", { class: fresh ? "fresh" : "", "data-seq": change.seq },
      h("code", { text: `#${change.seq} ` }),
      h("span", { class: `action ${change.op}`, text: change.op }), " ",
      change.op === "upsert"
        ? h("a", { href: link.object(tenant, modelName, change.entity, change.key), text: `${change.entity} ${JSON.stringify(change.key)}` })
        : `${change.entity} ${JSON.stringify(change.key)}`,
      change.object ? h("span", { class: "note mono", text: ` ${JSON.stringify(change.object)}` }) : null,
      change.deletedAt ? h("span", { class: "note", text: ` deleted at ${change.deletedAt}` }) : null);
  }

  // MARK: API reference, from the served openapi.yaml

  async function reference() {
    const answer = await send("GET", "/openapi.yaml");
    if (!answer.ok) throw new ApiError(answer.status, answer.body);
    const spec = CartographYAML.parse(answer.body);
    const resolve = item => {
      if (!item || !item.$ref) return item;
      return item.$ref.replace(/^#\//, "").split("/").reduce((node, part) => node && node[part.replace(/~1/g, "/").replace(/~0/g, "~")], spec);
    };
    const groups = new Map((spec.tags || []).map(tag => [tag.name, []]));
    for (const [path, item] of Object.entries(spec.paths || {})) {
      for (const method of ["get", "put", "post", "patch", "delete"]) {
        const operation = item[method];
        if (!operation) continue;
        const tag = (operation.tags || ["other"])[0];
        if (!groups.has(tag)) groups.set(tag, []);
        const parameters = [...(item.parameters || []), ...(operation.parameters || [])].map(resolve);
        groups.get(tag).push({ method, path, operation, parameters, requestBody: resolve(operation.requestBody) });
      }
    }
    show(h("h1", { text: `${spec.info.title} API ${spec.info.version}` }),
      h("p", { class: "description" }, prose(spec.info.description)),
      h("p", { class: "note" }, "Rendered from ", h("a", { href: "/openapi.yaml", text: "/openapi.yaml" }),
        ". “Try it” sends the request from this page with your token."),
      [...groups].filter(([, operations]) => operations.length).map(([tag, operations]) => h("section", {},
        h("h2", { text: tag }),
        operations.map(entry => operationView(entry, resolve)))));
  }

  function operationView({ method, path, operation, parameters, requestBody }, resolve) {
    const inputs = parameters.filter(p => p && (p.in === "path" || p.in === "query" || p.in === "header")).map(parameter => {
      const schema = parameter.schema || {};
      const preset = parameter.in === "path" && parameter.name === "tenant" ? session.tenant : "";
      return { parameter, input: h("input", { name: parameter.name, "data-in": parameter.in, value: preset,
        placeholder: schema.default !== undefined ? String(schema.default) : (schema.enum ? schema.enum.join(" | ") : schema.type || "") }) };
    });
    const contentTypes = requestBody && requestBody.content ? Object.keys(requestBody.content) : [];
    const bodyType = contentTypes.length ? h("select", { name: "content-type" }, contentTypes.map(type => h("option", { value: type, text: type }))) : null;
    const example = contentTypes.length ? exampleOf(requestBody.content[contentTypes[0]]) : undefined;
    const body = contentTypes.length ? h("textarea", { name: "body", spellcheck: "false" }, example === undefined ? "" : json(example)) : null;
    const output = h("div", { class: "try-result" });
    const form = h("form", { class: "try" },
      inputs.length ? h("div", { class: "inline" }, inputs.map(({ parameter, input }) =>
        h("label", {}, `${parameter.name} (${parameter.in}${parameter.required ? ", required" : ""})`, input))) : null,
      body ? h("label", {}, h("span", {}, "Request body ", bodyType), body) : null,
      h("p", {}, h("button", { type: "submit", class: "send", text: `Send ${method.toUpperCase()}` })),
      output);
    form.addEventListener("submit", async event => {
      event.preventDefault();
      let url = path;
      const query = {}, headers = {};
      for (const { parameter, input } of inputs) {
        const value = input.value.trim();
        if (parameter.in === "path") url = url.replace(`{${parameter.name}}`, parameter.name === "key" ? value : enc(value));
        else if (parameter.in === "query") query[parameter.name] = value;
        else if (value) headers[parameter.name] = value;
      }
      output.replaceChildren(h("p", { class: "note", text: "Sending…" }));
      try {
        const answer = await send(method.toUpperCase(), withQuery(url, query),
          { headers, ...(body ? { body: body.value, contentType: bodyType.value } : {}) });
        output.replaceChildren(
          h("p", {}, h("span", { class: `status ${answer.ok ? "ok" : "error"}`, text: String(answer.status) }), ` ${answer.contentType}`),
          h("pre", { class: "response", text: typeof answer.body === "string" ? answer.body : json(answer.body) }));
      } catch (error) {
        output.replaceChildren(problemBox(error));
      }
    });
    const statuses = Object.entries(operation.responses || {}).map(([status, response]) => {
      const resolved = resolve(response) || {};
      return h("tr", {}, h("td", { text: status }), h("td", { class: "description" }, prose(resolved.description)));
    });
    return h("details", { class: "op", id: `op-${operation.operationId}` },
      h("summary", {}, h("span", { class: `method ${method}`, text: method.toUpperCase() }), h("code", { text: path }), h("span", { text: operation.summary || "" })),
      h("div", { class: "body" },
        operation.description ? h("p", { class: "description" }, prose(operation.description)) : null,
        parameters.length ? h("table", {},
          h("tr", {}, h("th", { text: "Parameter" }), h("th", { text: "In" }), h("th", { text: "Description" })),
          parameters.filter(Boolean).map(p => h("tr", {}, h("td", {}, h("code", { text: p.name })), h("td", { text: p.in }), h("td", { class: "description" }, prose(p.description))))) : null,
        h("table", {}, h("tr", {}, h("th", { text: "Status" }), h("th", { text: "Meaning" })), statuses),
        h("h3", { text: "Try it" }), form));
  }

  // A description of the spec as a reader sees it: `code` spans as code, and the design's rule ids
  // (`(R-P18)`, `R-W1, …`), which point into docs/rules.md, left out.
  function prose(text) {
    const ids = "R-[A-Z]{1,2}\\d+(?:\\s*(?:,|…|–|-|and)\\s*R-[A-Z]{1,2}\\d+)*";
    const ruleIDs = new RegExp(`\\s*\\(${ids}\\)|(^|[.;:]\\s+|\\n\\s*)${ids}[,:]\\s*|(\\()${ids}(?:'s)?(?:[,;]\\s*|\\s+)`, "g");
    const plain = (text || "").replace(ruleIDs, (match, lead, paren) => lead || paren || "");
    return plain.split("`").map((part, index) => index % 2 === 1 ? h("code", { text: part }) : part);
  }

  // The first example a media type declares, if any.
  function exampleOf(media) {
    if (!media) return undefined;
    if (media.example !== undefined) return media.example;
    const first = media.examples && Object.values(media.examples)[0];
    return first ? first.value : undefined;
  }

  // MARK: Navigation

  function navigation(route) {
    const nav = document.getElementById("nav");
    const tenant = route.tenant || session.tenant;
    nav.replaceChildren(...nodes([
      session.token && !session.tenant ? h("a", { href: "#/tenants", text: "Tenants" }) : null,
      session.token && tenant ? h("a", { href: link.tenant(tenant), text: "Models" }) : null,
      h("a", { href: "#/reference", id: "nav-reference", text: "API reference" })]));
    document.getElementById("who").textContent = session.token ? `signed in${session.tenant ? ` to ${session.tenant}` : " as admin"}` : "";
    document.getElementById("sign-out").hidden = !session.token;
  }

  // "#/t/acme/m/comics/e/Character?where=…" -> { parts: ["t", "acme", …], query }.
  function parseFragment() {
    const fragment = location.hash.replace(/^#\/?/, "");
    const [path, query = ""] = fragment.split("?", 2);
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    return { parts, query: new URLSearchParams(query) };
  }

  // The running view's controller.
  let current = new AbortController();

  async function render() {
    current.abort();
    const controller = new AbortController();
    current = controller;
    try {
      const { parts, query } = parseFragment();
      const [, tenant, , modelName, kind, name, , key] = parts;
      navigation({ tenant: parts[0] === "t" ? tenant : null });
      if (parts[0] === "reference") return await reference();
      if (!session.token) return signIn();
      if (parts.length === 0) { location.hash = session.tenant ? link.tenant(session.tenant) : "#/tenants"; return; }
      if (parts[0] === "tenants") return await tenants();
      if (parts[0] !== "t" || !tenant) throw new Error("No such page.");
      if (parts.length === 2) return await models(tenant);
      if (parts.length === 4) return await model(tenant, modelName);
      if (kind === "changes") return await changes(tenant, modelName, controller.signal);
      if (kind === "map" && parts.length === 6) return await mapping(tenant, modelName, name);
      if (kind === "e" && parts.length === 6) return await objects(tenant, modelName, name, query);
      if (kind === "e" && parts.length === 8) return await object(tenant, modelName, name, key);
      throw new Error("No such page.");
    } catch (error) {
      if (controller.signal.aborted || current !== controller) return;
      show(problemBox(error), h("p", {}, h("a", { href: "#/", text: "Back to the start" })));
    }
  }

  document.getElementById("sign-out").addEventListener("click", () => {
    session.clear();
    location.hash = "#/";
    render();
  });
  window.addEventListener("hashchange", render);
  render();
})();
