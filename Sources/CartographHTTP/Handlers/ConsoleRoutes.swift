// The browser console (docs/console.md): a page, its stylesheet, scripts and icon, served by the binary
// to anyone (the data it shows comes from the API, with the token the user signs in with).
import CartographCore

enum ConsoleRoutes {
    /// The files of Console/ by name. SwiftPM writes each into the binary at build time (`.embedInCode`
    /// in Package.swift), so the console needs no CDN and no build step, and there is no generated copy
    /// of the files to keep current.
    static let assets: [String: (contentType: String, body: [UInt8])] = [
        "console.css": ("text/css; charset=utf-8", PackageResources.console_css),
        "console.js": ("text/javascript; charset=utf-8", PackageResources.console_js),
        "yaml.js": ("text/javascript; charset=utf-8", PackageResources.yaml_js),
        "favicon.svg": ("image/svg+xml", PackageResources.favicon_svg),
    ]

    /// Scripts, styles, images and requests from this origin only, no inline script or style, no framing:
    /// an injected `<script>` or a hostile page framing the console gets nowhere.
    static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
        + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static let routes: [Route] = [
        Route("GET", "/", access: .anyone) { _ in
            HTTPResponse(status: 302, headers: [("Location", "/console")] + securityHeaders)
        },
        Route("GET", "/console", access: .anyone) { _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")] + securityHeaders,
                         body: PackageResources.console_html)
        },
        Route("GET", "/console/{asset}", access: .anyone) { context in
            let name = context.parameter("asset")
            guard let asset = assets[name] else {
                throw CartographError(.notFound, "The console has no file '\(name)'.")
            }
            return HTTPResponse(status: 200, headers: [("Content-Type", asset.contentType)] + securityHeaders, body: asset.body)
        },
    ]

    /// The naming rule of a console file (`^[a-z0-9][a-z0-9_-]{0,62}\.[a-z]{1,8}$`): the router answers 400
    /// for any other `{asset}`, as for any other invalid name, and 404 for a well-formed name it lacks.
    static func isFileName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let stem = parts.first, let suffix = parts.last else { return false }
        let isLowercaseLetter = { (byte: UInt8) in (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
        return Names.isResourceName(String(stem)) && (1...8).contains(suffix.utf8.count) && suffix.utf8.allSatisfy(isLowercaseLetter)
    }

    /// On every console response. `no-cache`: a browser revalidates, so a new binary's console is used at once.
    static let securityHeaders: [(name: String, value: String)] = [
        ("Content-Security-Policy", contentSecurityPolicy),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-cache"),
    ]
}
