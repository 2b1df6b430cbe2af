// A reader for the YAML that openapi.yaml is written in, so that the console's API reference renders the
// document the server serves (GET /openapi.yaml) without a library from elsewhere: block mappings and
// sequences, flow collections on one line, plain, quoted and block (| >) scalars, continued plain and
// quoted scalars, comments, and anchors with aliases. Not a general YAML parser (no tags, no multi-line
// flow collections, no documents).
"use strict";

const CartographYAML = (() => {
  // Where a comment starts: a '#' at the line's start or after a blank, outside a quoted scalar. A quote
  // opens a scalar only where a scalar can start (so "client's" in a plain scalar opens nothing).
  function commentStart(text) {
    let quote = null;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quote === "'") { if (c === "'") quote = null; continue; }
      if (quote === '"') { if (c === "\\") i++; else if (c === '"') quote = null; continue; }
      const before = text.slice(0, i).trimEnd();
      if ((c === "'" || c === '"') && (before === "" || /[:\-[{,]$/.test(before))) { quote = c; continue; }
      if (c === "#" && (i === 0 || text[i - 1] === " " || text[i - 1] === "\t")) return i;
    }
    return text.length;
  }

  function scalar(text) {
    if (text === "" || text === "~" || text === "null") return null;
    if (text === "true") return true;
    if (text === "false") return false;
    if (/^-?(0|[1-9][0-9]*)$/.test(text)) return Number(text);
    if (/^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/.test(text)) return Number(text);
    return text;
  }

  function unquote(text) {
    if (text[0] === "'") return text.slice(1, -1).replace(/''/g, "'");
    return JSON.parse(text.replace(/\n/g, "\\n"));
  }

  // Whether a (trimmed) quoted scalar ends on this text.
  function quoteCloses(text) {
    const q = text[0];
    for (let i = 1; i < text.length; i++) {
      if (q === '"' && text[i] === "\\") { i++; continue; }
      if (text[i] === q) {
        if (q === "'" && text[i + 1] === "'") { i++; continue; }
        return true;
      }
    }
    return false;
  }

  // One-line flow collections: { a: b, c: [d, 'e'] }.
  function parseFlow(text) {
    let pos = 0;
    const blank = () => { while (pos < text.length && /\s/.test(text[pos])) pos++; };
    function value(inMapKey) {
      blank();
      const c = text[pos];
      if (c === "{") {
        pos++;
        const object = {};
        for (;;) {
          blank();
          if (text[pos] === "}") { pos++; return object; }
          const key = value(true);
          blank();
          // A key without ':' has a null value, as in any YAML reader.
          if (text[pos] === ":") { pos++; object[String(key)] = value(false); } else object[String(key)] = null;
          blank();
          if (text[pos] === ",") pos++;
        }
      }
      if (c === "[") {
        pos++;
        const array = [];
        for (;;) {
          blank();
          if (text[pos] === "]") { pos++; return array; }
          array.push(value(false));
          blank();
          if (text[pos] === ",") pos++;
        }
      }
      if (c === "'" || c === '"') {
        const start = pos;
        pos++;
        while (pos < text.length) {
          if (c === '"' && text[pos] === "\\") { pos += 2; continue; }
          if (text[pos] === c) {
            if (c === "'" && text[pos + 1] === "'") { pos += 2; continue; }
            break;
          }
          pos++;
        }
        pos++;
        return unquote(text.slice(start, pos));
      }
      const start = pos;
      while (pos < text.length && !",]}".includes(text[pos]) && !(text[pos] === ":" && (inMapKey || /\s/.test(text[pos + 1] || " ")))) pos++;
      return scalar(text.slice(start, pos).trim());
    }
    const result = value(false);
    blank();
    if (pos !== text.length) throw new Error(`YAML flow collection: unexpected text after position ${pos} in ${text}`);
    return result;
  }

  // "key: rest" -> [key, rest], or null when the text is not a mapping entry.
  function splitKey(text) {
    const match = /^('(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|[^\s'"{[\]},#&*!|>%@`-][^\n]*?|-[^\s][^\n]*?)\s*:(?:\s+(.*))?$/.exec(text);
    if (!match) return null;
    const raw = match[1];
    const key = raw[0] === "'" || raw[0] === '"' ? unquote(raw) : raw;
    return [key, match[2] === undefined ? "" : match[2]];
  }

  function parse(source) {
    const raw = source.replace(/\r\n?/g, "\n").split("\n");
    const lines = raw.map(line => {
      const cut = line.slice(0, commentStart(line)).trimEnd();
      return { indent: cut.length - cut.trimStart().length, text: cut.trim(), raw: line };
    });
    const anchors = {};
    let i = 0;
    const skipBlank = () => { while (i < lines.length && lines[i].text === "") i++; };
    const isItem = line => line.text === "-" || line.text.startsWith("- ");

    function block(indent) {
      skipBlank();
      if (i >= lines.length) return null;
      return isItem(lines[i]) ? sequence(lines[i].indent) : mapping(lines[i].indent);
    }

    function mapping(indent) {
      const object = {};
      for (skipBlank(); i < lines.length && lines[i].indent === indent && !isItem(lines[i]); skipBlank()) {
        const entry = splitKey(lines[i].text);
        if (!entry) throw new Error(`YAML: a mapping entry expected on line ${i + 1}: ${lines[i].text}`);
        i++;
        object[entry[0]] = value(entry[1], indent, true);
      }
      if (i < lines.length && lines[i].indent > indent) throw new Error(`YAML: unexpected indentation on line ${i + 1}`);
      return object;
    }

    function sequence(indent) {
      const array = [];
      for (skipBlank(); i < lines.length && lines[i].indent === indent && isItem(lines[i]); skipBlank()) {
        const rest = lines[i].text.slice(1).trimStart();
        if (rest !== "" && splitKey(rest) && !/^[{['"]/.test(rest)) {
          // "- key: value": a mapping whose first entry shares the dash's line.
          lines[i] = { indent: indent + (lines[i].text.length - rest.length), text: rest, raw: lines[i].raw };
          array.push(mapping(lines[i].indent));
        } else {
          i++;
          array.push(value(rest, indent, false));
        }
      }
      return array;
    }

    // The value after "key:" or "- " on a line at `indent`; the lines it continues onto are consumed.
    function value(text, indent, inMapping) {
      let anchor = null;
      const anchored = /^&([^\s]+)\s*(.*)$/.exec(text);
      if (anchored) { anchor = anchored[1]; text = anchored[2]; }
      let result;
      if (text.startsWith("*")) {
        result = anchors[text.slice(1)];
      } else if (text === "") {
        skipBlank();
        const next = lines[i];
        if (next && (next.indent > indent || (inMapping && next.indent === indent && isItem(next)))) result = block(next.indent);
        else result = null;
      } else if (/^[|>][-+]?$/.test(text)) {
        result = blockScalar(text, indent);
      } else if (text[0] === "{" || text[0] === "[") {
        result = parseFlow(text);
      } else if (text[0] === "'" || text[0] === '"') {
        let joined = text;
        while (!quoteCloses(joined) && i < lines.length) joined += " " + lines[i++].raw.trim();
        result = unquote(joined);
      } else {
        let joined = text;
        while (i < lines.length && lines[i].text !== "" && lines[i].indent > indent) joined += " " + lines[i++].text;
        result = scalar(joined);
      }
      if (anchor) anchors[anchor] = result;
      return result;
    }

    function blockScalar(header, indent) {
      const body = [];
      let blockIndent = null;
      while (i < lines.length) {
        const line = lines[i].raw;
        const lineIndent = line.length - line.trimStart().length;
        if (line.trim() === "") { body.push(""); i++; continue; }
        if (lineIndent <= indent) break;
        if (blockIndent === null) blockIndent = lineIndent;
        body.push(line.slice(blockIndent));
        i++;
      }
      while (body.length && body[body.length - 1] === "") body.pop();
      let text = header[0] === "|" ? body.join("\n")
        : body.reduce((folded, line) => folded + (line === "" ? "\n" : (folded === "" || folded.endsWith("\n") ? "" : " ") + line), "");
      if (!header.endsWith("-")) text += "\n";
      return text;
    }

    const document = block(0);
    skipBlank();
    if (i < lines.length) throw new Error(`YAML: unexpected text on line ${i + 1}`);
    return document;
  }

  return { parse };
})();
