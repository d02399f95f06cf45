/// The files compiled into the binary (`.embedInCode` resources in Package.swift): the OpenAPI
/// document and the web pages, served as they are in the repository.
enum EmbeddedFiles {
    /// `Sources/Bridge/API/openapi.json`.
    static let openAPI = String(decoding: PackageResources.openapi_json, as: UTF8.self)

    /// The pages and their assets by file name, with their content types.
    static let web: [String: (type: String, text: String)] = [
        "index.html": ("text/html; charset=utf-8", String(decoding: PackageResources.index_html, as: UTF8.self)),
        "overlay.html": ("text/html; charset=utf-8", String(decoding: PackageResources.overlay_html, as: UTF8.self)),
        "board.html": ("text/html; charset=utf-8", String(decoding: PackageResources.board_html, as: UTF8.self)),
        "app.css": ("text/css; charset=utf-8", String(decoding: PackageResources.app_css, as: UTF8.self)),
        "live.js": ("text/javascript; charset=utf-8", String(decoding: PackageResources.live_js, as: UTF8.self)),
        "chart.js": ("text/javascript; charset=utf-8", String(decoding: PackageResources.chart_js, as: UTF8.self)),
        "dashboard.js": (
            "text/javascript; charset=utf-8", String(decoding: PackageResources.dashboard_js, as: UTF8.self)
        ),
        "board.js": ("text/javascript; charset=utf-8", String(decoding: PackageResources.board_js, as: UTF8.self)),
        "board.css": ("text/css; charset=utf-8", String(decoding: PackageResources.board_css, as: UTF8.self)),
        "overlay.js": ("text/javascript; charset=utf-8", String(decoding: PackageResources.overlay_js, as: UTF8.self)),
        "overlay.css": ("text/css; charset=utf-8", String(decoding: PackageResources.overlay_css, as: UTF8.self)),
    ]
}
