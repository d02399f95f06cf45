import Hummingbird
import NIOCore

/// The dashboard (`/`), the overlay (`/overlay`), the class board (`/board`) and their assets,
/// compiled into the binary.
struct PageController {
    func addRoutes(to router: Router<BridgeRequestContext>) {
        let pages = ["/": "index.html", "/overlay": "overlay.html", "/board": "board.html"]
        for (path, file) in pages {
            router.get(RouterPath(path)) { _, _ in try Self.page(file) }
        }
        for file in EmbeddedFiles.web.keys where !file.hasSuffix(".html") {
            router.get(RouterPath("/" + file)) { _, _ in try Self.page(file) }
        }
    }

    static func page(_ file: String) throws -> Response {
        guard let asset = EmbeddedFiles.web[file] else { throw APIError.notFound("no page \(file)") }
        return Response(
            status: .ok, headers: [.contentType: asset.type, .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: asset.text)))
    }
}
