import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A yes/no question on a terminal; anything but a terminal answers no.
enum Prompt {
    static func yes(_ question: String, interactive: Bool) -> Bool {
        guard interactive, isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { return false }
        FileHandle.standardOutput.write(Data(question.utf8))
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        return answer.isEmpty || answer.hasPrefix("y")
    }
}
