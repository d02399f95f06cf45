import Foundation

/// Reads a journal file's records in order, a chunk at a time (memory stays at a chunk, whatever
/// the file's size). Damage (a torn or overwritten record) is skipped up to the next record whose
/// checksum holds, and counted.
struct JournalReader: IteratorProtocol, Sendable {
    /// Bytes read from the file at a time.
    static let chunkBytes = 64 << 10

    private let handle: FileHandle?
    private var buffer: [UInt8] = []
    private var index = 0
    /// The file offset of `buffer[0]`.
    private var bufferOffset = 0
    private var atEnd = false
    private var inDamage = false
    /// Runs of damaged bytes skipped so far (a run counts once).
    private(set) var damaged = 0
    /// Where the last whole record ends in the file.
    private(set) var validEnd = 0
    /// Whether the file ends inside a record (the process died while writing it).
    private(set) var tornTail = false

    init(path: String) {
        handle = FileHandle(forReadingAtPath: path)
        atEnd = handle == nil
    }

    mutating func next() -> (address: String, envelope: ArraySlice<UInt8>)? {
        while true {
            if !atEnd, buffer.count - index < JournalRecord.maximumBytes { refill() }
            guard index < buffer.count else { return nil }
            switch JournalRecord.read(buffer, at: index) {
            case .record(let address, let envelope, let length):
                index += length
                inDamage = false
                validEnd = bufferOffset + index
                return (address, envelope)
            case .incomplete where atEnd:
                tornTail = true
                index = buffer.count
                return nil
            case .incomplete:
                refill()
            case .damaged:
                if !inDamage { damaged += 1 }
                inDamage = true
                // Resynchronise on the next magic.
                let from = index + 1
                index = buffer[from...].firstIndex(of: JournalRecord.magic[0]) ?? buffer.count
            }
        }
    }

    private mutating func refill() {
        guard let handle, !atEnd else { return }
        let chunk = (try? handle.read(upToCount: Self.chunkBytes)) ?? nil
        guard let chunk, !chunk.isEmpty else {
            atEnd = true
            try? handle.close()
            return
        }
        buffer.removeSubrange(0..<index)
        bufferOffset += index
        index = 0
        buffer.append(contentsOf: chunk)
    }
}
