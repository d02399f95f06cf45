import Foundation
import Wire

/// A secret kept in its own file (`password_file` in the config): its first line, in a regular
/// file of at most 4 KiB. Checked when the configuration is read, so `--check-config` finds what
/// would stop the daemon, and a FIFO never holds up its start.
enum PasswordFile {
    /// The most bytes a password file may hold.
    static let maximumBytes = 4096

    /// Why a password file cannot be used.
    enum Problem: Error, Equatable, CustomStringConvertible {
        case unreadable, notRegular, tooLarge, notText, empty

        var description: String {
            switch self {
            case .unreadable: "cannot be read"
            case .notRegular: "is not a regular file"
            case .tooLarge: "holds more than 4 KiB"
            case .notText: "is not UTF-8 text"
            case .empty: "has no password on its first line"
            }
        }
    }

    /// The password in `path`: its first line exactly (a blank first line is no password).
    static func password(at path: String) -> Result<String, Problem> {
        let data: Data
        do {
            data = try BoundedFile.read(path, limit: maximumBytes, regularOnly: true)
        } catch .notRegular {
            return .failure(.notRegular)
        } catch .larger {
            return .failure(.tooLarge)
        } catch {
            return .failure(.unreadable)
        }
        guard let text = String(data: data, encoding: .utf8) else { return .failure(.notText) }
        let line = text.prefix { $0 != "\n" && $0 != "\r\n" && $0 != "\r" }
        return line.isEmpty ? .failure(.empty) : .success(String(line))
    }

    /// The password in `path`; nil when ``password(at:)`` finds a problem.
    static func read(_ path: String) -> String? { try? password(at: path).get() }
}
