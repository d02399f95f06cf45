import NIOCore

/// Next to a connection's socket: flushes that come within `window` of each other leave in one
/// `writev`. Hummingbird's WebSocket and response writers flush after every message, so a hub
/// relaying a burst of 60 straps' frames made one system call and one TCP segment per message and
/// client — the largest share of its CPU in the profile (Benchmarks/README.md). A close, or the
/// handler's removal, flushes what waits first.
final class FlushCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = Any

    /// Long enough to gather one burst of frames, short beside the 20 ms a frame may take to a client.
    static let defaultWindow = TimeAmount.milliseconds(1)

    private let window: TimeAmount
    private var pending: Scheduled<Void>?

    init(window: TimeAmount = FlushCoalescingHandler.defaultWindow) {
        self.window = window
    }

    func flush(context: ChannelHandlerContext) {
        guard pending == nil else { return }
        pending = context.eventLoop.assumeIsolated().scheduleTask(in: window) { [self] in
            pending = nil
            context.flush()
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        flushNow(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        flushNow(context: context)
    }

    private func flushNow(context: ChannelHandlerContext) {
        guard let waiting = pending else { return }
        waiting.cancel()
        pending = nil
        context.flush()
    }
}
