import NIOCore
import NIOEmbedded
import Testing

@testable import Bridge

/// Counts the flushes that reach the socket.
private final class FlushCounter: ChannelOutboundHandler {
    typealias OutboundIn = Any
    var flushes = 0

    func flush(context: ChannelHandlerContext) {
        flushes += 1
        context.flush()
    }
}

@Suite("Flushes coalesced next to the socket")
struct FlushCoalescingTests {
    /// A channel with the counter next to the socket and the coalescer after it.
    private func channel() throws -> (EmbeddedChannel, FlushCounter) {
        let counter = FlushCounter()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(FlushCoalescingHandler(window: .milliseconds(1)))
        return (channel, counter)
    }

    private func written(_ channel: EmbeddedChannel) throws -> [String] {
        var lines: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { lines.append(String(buffer: buffer)) }
        return lines
    }

    @Test("a burst of messages, each written and flushed, reaches the socket in one flush after the window")
    func burstIsOneFlush() throws {
        let (channel, counter) = try channel()
        for index in 1...20 { channel.writeAndFlush(ByteBuffer(string: "m\(index)"), promise: nil) }
        #expect(try written(channel).isEmpty, "nothing leaves before the window ends")
        channel.embeddedEventLoop.advanceTime(by: .microseconds(999))
        #expect(counter.flushes == 0)
        channel.embeddedEventLoop.advanceTime(by: .microseconds(1))
        #expect(counter.flushes == 1)
        #expect(try written(channel) == (1...20).map { "m\($0)" }, "every message, in order")
        // The next burst opens a new window.
        channel.writeAndFlush(ByteBuffer(string: "n1"), promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(counter.flushes == 2)
        #expect(try written(channel) == ["n1"])
        _ = try channel.finish()
    }

    @Test("a close flushes what waits first: a response written just before it is not lost")
    func closeFlushesFirst() throws {
        let (channel, counter) = try channel()
        channel.writeAndFlush(ByteBuffer(string: "last response"), promise: nil)
        let closed = channel.close()
        #expect(counter.flushes == 1)
        #expect(try written(channel) == ["last response"])
        try closed.wait()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(5))
        #expect(counter.flushes == 1, "the cancelled window flushes nothing more")
    }

    @Test("removing the handler flushes what waits")
    func removalFlushes() throws {
        let (channel, counter) = try channel()
        let coalescer = try channel.pipeline.syncOperations.handler(type: FlushCoalescingHandler.self)
        channel.writeAndFlush(ByteBuffer(string: "m1"), promise: nil)
        try channel.pipeline.syncOperations.removeHandler(coalescer).wait()
        #expect(counter.flushes == 1)
        #expect(try written(channel) == ["m1"])
        _ = try channel.finish()
    }
}
