import Foundation
import Wire

/// A secret kept in its own file (`password_file` in the config): the first line, at most 4 KiB.
enum PasswordFile {
    /// The most bytes a password file may hold.
    static let maximumBytes = 4096

    /// The password in `path`; nil when the file cannot be read, is larger than 4 KiB or is not UTF-8.
    static func read(_ path: String) -> String? {
        guard let data = try? BoundedFile.read(path, limit: maximumBytes),
            let text = String(data: data, encoding: .utf8)
        else { return nil }
        return text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    }
}
