// The browser console's routes (docs/console.md): the page and its files come from the binary, to anyone,
// with a strict Content-Security-Policy, and reference nothing outside the server. scripts/console-test.py
// drives the console itself in a real browser.
import Foundation
import Testing
import CartographCore
import CartographTesting
@testable import CartographHTTP

struct ConsoleRoutesTests {
    static let consoleDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/CartographHTTP/Console")

    /// `/console` and `/console/<file>` with the file's name on disk.
    static let served: [(target: String, file: String, mediaType: String)] = [
        ("/console", "console.html", "text/html"),
        ("/console/console.css", "console.css", "text/css"),
        ("/console/console.js", "console.js", "text/javascript"),
        ("/console/yaml.js", "yaml.js", "text/javascript"),
        ("/console/favicon.svg", "favicon.svg", "image/svg+xml"),
    ]

    @Test func thePageAndItsFilesAreServedWithoutATokenWithTheirContentTypes() throws {
        let server = try InProcessServer()
        for (target, file, mediaType) in Self.served {
            let response = try server.send("GET", target)
            #expect(response.status == 200, "\(target)")
            #expect(response.header("Content-Type")?.hasPrefix(mediaType) == true, "\(target): \(response.header("Content-Type") ?? "none")")
            // The binary serves the files as they are in the repository (SwiftPM embeds them at build time).
            let onDisk = try Data(contentsOf: Self.consoleDirectory.appendingPathComponent(file))
            #expect(response.body == [UInt8](onDisk), "\(target) is \(file)")
        }
        #expect(Set(ConsoleRoutes.assets.keys) == Set(Self.served.dropFirst().map(\.file)), "every file is checked here")
        let page = try server.send("GET", "/console").text
        #expect(page.contains(#"<script src="/console/console.js" defer></script>"#))
        #expect(page.contains(#"<link rel="stylesheet" href="/console/console.css">"#))
    }

    @Test func everyConsoleResponseCarriesAStrictContentSecurityPolicyAndNoSniff() throws {
        let server = try InProcessServer()
        for target in Self.served.map(\.target) + ["/"] {
            let response = try server.send("GET", target)
            let policy = try #require(response.header("Content-Security-Policy"), "\(target)")
            let directives = Dictionary(uniqueKeysWithValues: policy.split(separator: ";").map { directive in
                let words = directive.split(separator: " ").map(String.init)
                return (words[0], Array(words.dropFirst()))
            })
            #expect(directives["default-src"] == ["'self'"], "\(target): \(policy)")
            #expect(directives["script-src"] == ["'self'"], "\(target): no inline script")
            #expect(directives["style-src"] == ["'self'"], "\(target): no inline style")
            #expect(directives["frame-ancestors"] == ["'none'"], "\(target): not framed")
            #expect(!policy.contains("unsafe"), "\(target): \(policy)")
            #expect(response.header("X-Content-Type-Options") == "nosniff", "\(target)")
        }
    }

    @Test func theRootRedirectsToTheConsoleAndAnUnknownFileIsA404() throws {
        let server = try InProcessServer()
        let root = try server.send("GET", "/")
        #expect(root.status == 302)
        #expect(root.header("Location") == "/console")
        let unknown = try server.send("GET", "/console/secrets.txt")
        #expect(unknown.status == 404)
        #expect(unknown.header("Content-Type") == "application/problem+json")
        #expect(try unknown.json()["detail"]?.stringValue?.contains("secrets.txt") == true)
        for invalid in ["..", "console", ".js", "console.js.map", "Console.js", "..%2Fopenapi.yaml", "%00.js", ""] {
            #expect(try server.send("GET", "/console/" + invalid).status == 400, "\(invalid) is not a file name")
        }
        #expect(try server.send("POST", "/console").status == 405)
    }

    /// The console works offline and leaks nothing to a third party: no file names an outside address
    /// (the SVG namespace is a name, never fetched), the page has no inline script, style or handler, and
    /// every file it loads is served.
    @Test func noConsoleFileReferencesAnExternalURL() throws {
        let server = try InProcessServer()
        let svgNamespace = "http://www.w3.org/2000/svg"
        for (target, _, _) in Self.served {
            let text = try server.send("GET", target).text.replacingOccurrences(of: svgNamespace, with: "")
            for external in ["http://", "https://", "ws://", "wss://", "//cdn", "src=\"//", "href=\"//", "url(//", "url(\"//", "@import"] {
                #expect(!text.contains(external), "\(target) contains \(external)")
            }
        }
        let page = try server.send("GET", "/console").text
        #expect(!page.contains("<script>") && !page.contains("style=") && !page.contains("<style"), "no inline script or style")
        #expect(page.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "no inline event handler")
        let references = page.matches(of: /(?:src|href)="([^"#]+)"/).map { String($0.output.1) }
        #expect(references.count == 4)
        for reference in references {
            #expect(reference.hasPrefix("/console/"), "\(reference)")
            #expect(try server.send("GET", reference).status == 200, "\(reference)")
        }
    }

    /// R-S7: the spec names every file the asset route serves.
    @Test func R_S7_theSpecListsTheConsoleFiles() throws {
        let spec = try String(contentsOf: Self.consoleDirectory.appendingPathComponent("../../../openapi.yaml"), encoding: .utf8)
        let line = try #require(spec.split(separator: "\n").first { $0.contains("enum: [console.css") })
        let listed = line.split(separator: "[")[1].split(separator: "]")[0].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(Set(listed) == Set(ConsoleRoutes.assets.keys))
    }
}
