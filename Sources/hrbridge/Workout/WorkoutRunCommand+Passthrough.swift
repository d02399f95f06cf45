import ArgumentParser

extension WorkoutRunCommand {
    /// Parses `workout run` options handed on by another command (`workout recover`, `plan run`):
    /// its `--help` and its errors name that command and point at `workout run --help`, instead
    /// of the root's help or a bare `run`.
    static func parse(handedOn arguments: [String], by command: String, abstract: String) throws -> WorkoutRunCommand {
        do {
            return try parse(arguments)
        } catch {
            let usage = "hrbridge \(command) [<options of `hrbridge workout run`>]"
            if exitCode(for: error) == .success {
                print("OVERVIEW: \(abstract)\n\nUSAGE: \(usage)\n\nThe options: `hrbridge workout run --help`.")
                throw ExitCode.success
            }
            StandardError.write(
                "Error: \(message(for: error))\nUsage: \(usage)\n  See 'hrbridge workout run --help' for the options.")
            throw ExitCode.validationFailure
        }
    }
}
