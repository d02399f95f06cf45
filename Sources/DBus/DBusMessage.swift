import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// An owned libdbus message. libdbus messages are reference counted and safe to pass between
/// threads once built; this wrapper is only mutated while it is being built.
final class DBusMessage: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of a reference.
    init(owning pointer: OpaquePointer) { self.pointer = pointer }

    /// Adds a reference to a message libdbus lends us.
    init(retaining pointer: OpaquePointer) {
        self.pointer = pointer
        dbus_message_ref(pointer)
    }

    deinit { dbus_message_unref(pointer) }

    // libdbus aborts the process when a name or path it is given is invalid (its checks are
    // fatal): each is validated first, and an invalid one makes no message.

    static func methodCall(destination: String?, path: String, interface: String?, member: String) -> DBusMessage? {
        guard destination.map({ dbus_validate_bus_name($0, nil) != 0 }) ?? true, dbus_validate_path(path, nil) != 0,
            interface.map({ dbus_validate_interface($0, nil) != 0 }) ?? true, dbus_validate_member(member, nil) != 0,
            let message = dbus_message_new_method_call(destination, path, interface, member)
        else { return nil }
        return DBusMessage(owning: message)
    }

    static func signal(path: String, interface: String, member: String) -> DBusMessage? {
        guard dbus_validate_path(path, nil) != 0, dbus_validate_interface(interface, nil) != 0,
            dbus_validate_member(member, nil) != 0, let message = dbus_message_new_signal(path, interface, member)
        else { return nil }
        return DBusMessage(owning: message)
    }

    func methodReturn() -> DBusMessage? {
        guard let message = dbus_message_new_method_return(pointer) else { return nil }
        return DBusMessage(owning: message)
    }

    func errorReply(name: String, message text: String) -> DBusMessage? {
        guard dbus_validate_error_name(name, nil) != 0, dbus_validate_utf8(text, nil) != 0,
            let message = dbus_message_new_error(pointer, name, text)
        else { return nil }
        return DBusMessage(owning: message)
    }

    var type: Int32 { dbus_message_get_type(pointer) }
    var path: String? { dbus_message_get_path(pointer).map { String(cString: $0) } }
    var interface: String? { dbus_message_get_interface(pointer).map { String(cString: $0) } }
    var member: String? { dbus_message_get_member(pointer).map { String(cString: $0) } }
    var sender: String? { dbus_message_get_sender(pointer).map { String(cString: $0) } }
    var errorName: String? { dbus_message_get_error_name(pointer).map { String(cString: $0) } }
    var signature: String { dbus_message_get_signature(pointer).map { String(cString: $0) } ?? "" }

    /// Appends arguments; returns `false` when a value is malformed (an invalid object path, say).
    func append(_ values: [DBusValue]) -> Bool {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(pointer, &iterator)
        for value in values where !Self.append(value, to: &iterator) { return false }
        return true
    }

    /// Reads every argument. libdbus hands out a duplicate of each file descriptor it reads; with
    /// `keepingDescriptors` they are the caller's to close, otherwise each is closed at once and
    /// reads as `.unixFD(-1)` (a signal nobody asked for must not use up the descriptor table).
    func arguments(keepingDescriptors: Bool = false) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &iterator) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            guard let value = Self.read(&iterator, keepingDescriptors: keepingDescriptors) else { break }
            values.append(value)
        } while dbus_message_iter_next(&iterator) != 0
        return values
    }

    // MARK: Reading

    /// The bytes of a `PropertiesChanged` signal that changes exactly `property` (an `ay`) on
    /// `interface` and invalidates nothing; `nil` for any other message. Reads the message in
    /// place, without building its ``DBusValue`` tree: this is the notification hot path.
    static func changedByteProperty(in pointer: OpaquePointer, interface: String, property: String) -> [UInt8]? {
        guard dbus_message_is_signal(pointer, "org.freedesktop.DBus.Properties", "PropertiesChanged") != 0 else {
            return nil
        }
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == CDBUS_TYPE_STRING,
            Self.basicString(&arguments, equals: interface), dbus_message_iter_next(&arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == CDBUS_TYPE_ARRAY,
            dbus_message_iter_get_element_type(&arguments) == CDBUS_TYPE_DICT_ENTRY
        else { return nil }
        var changed = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &changed)
        guard dbus_message_iter_get_arg_type(&changed) == CDBUS_TYPE_DICT_ENTRY else { return nil }
        var entry = DBusMessageIter()
        dbus_message_iter_recurse(&changed, &entry)
        guard dbus_message_iter_get_arg_type(&entry) == CDBUS_TYPE_STRING, Self.basicString(&entry, equals: property),
            dbus_message_iter_next(&entry) != 0, dbus_message_iter_get_arg_type(&entry) == CDBUS_TYPE_VARIANT,
            dbus_message_iter_next(&changed) == 0
        else { return nil }
        // Nothing invalidated (the third argument is an empty array, or absent).
        if dbus_message_iter_next(&arguments) != 0 {
            guard dbus_message_iter_get_arg_type(&arguments) == CDBUS_TYPE_ARRAY else { return nil }
            var invalidated = DBusMessageIter()
            dbus_message_iter_recurse(&arguments, &invalidated)
            guard dbus_message_iter_get_arg_type(&invalidated) == CDBUS_TYPE_INVALID else { return nil }
        }
        var variant = DBusMessageIter()
        dbus_message_iter_recurse(&entry, &variant)
        guard dbus_message_iter_get_arg_type(&variant) == CDBUS_TYPE_ARRAY,
            dbus_message_iter_get_element_type(&variant) == CDBUS_TYPE_BYTE
        else { return nil }
        var bytes = DBusMessageIter()
        dbus_message_iter_recurse(&variant, &bytes)
        var start: UnsafeRawPointer?
        var count: Int32 = 0
        withUnsafeMutablePointer(to: &start) {
            dbus_message_iter_get_fixed_array(&bytes, UnsafeMutableRawPointer($0), &count)
        }
        guard let start, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: start, count: Int(count)))
    }

    /// Whether the string (or object path) under `iterator` is `expected`, compared in place.
    private static func basicString(_ iterator: inout DBusMessageIter, equals expected: String) -> Bool {
        var pointer: UnsafePointer<CChar>?
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_basic(&iterator, UnsafeMutableRawPointer($0)) }
        guard let pointer else { return false }
        return expected.withCString { strcmp($0, pointer) == 0 }
    }

    private static func basic<T>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iterator, UnsafeMutableRawPointer($0)) }
        return value
    }

    private static func readString(_ iterator: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_basic(&iterator, UnsafeMutableRawPointer($0)) }
        return pointer.map { String(cString: $0) } ?? ""
    }

    static func read(_ iterator: inout DBusMessageIter, keepingDescriptors keep: Bool) -> DBusValue? {
        let type = dbus_message_iter_get_arg_type(&iterator)
        switch type {
        case CDBUS_TYPE_BYTE: return .byte(basic(&iterator, UInt8(0)))
        case CDBUS_TYPE_BOOLEAN: return .boolean(basic(&iterator, dbus_bool_t(0)) != 0)
        case CDBUS_TYPE_INT16: return .int16(basic(&iterator, Int16(0)))
        case CDBUS_TYPE_UINT16: return .uint16(basic(&iterator, UInt16(0)))
        case CDBUS_TYPE_INT32: return .int32(basic(&iterator, Int32(0)))
        case CDBUS_TYPE_UINT32: return .uint32(basic(&iterator, UInt32(0)))
        case CDBUS_TYPE_INT64: return .int64(basic(&iterator, Int64(0)))
        case CDBUS_TYPE_UINT64: return .uint64(basic(&iterator, UInt64(0)))
        case CDBUS_TYPE_DOUBLE: return .double(basic(&iterator, Double(0)))
        case CDBUS_TYPE_STRING: return .string(readString(&iterator))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(readString(&iterator))
        case CDBUS_TYPE_SIGNATURE: return .signature(readString(&iterator))
        case CDBUS_TYPE_UNIX_FD:
            let descriptor = basic(&iterator, Int32(-1))
            if keep || descriptor < 0 { return .unixFD(descriptor) }
            close(descriptor)
            return .unixFD(-1)
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return read(&sub, keepingDescriptors: keep).map(DBusValue.variant)
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            var members: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                guard let member = read(&sub, keepingDescriptors: keep) else { return nil }
                members.append(member)
                dbus_message_iter_next(&sub)
            }
            return .structure(members)
        case CDBUS_TYPE_ARRAY:
            return readArray(&iterator, keepingDescriptors: keep)
        default:
            return nil
        }
    }

    private static func readArray(_ iterator: inout DBusMessageIter, keepingDescriptors keep: Bool) -> DBusValue? {
        let elementType = dbus_message_iter_get_element_type(&iterator)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &sub)
        if elementType == CDBUS_TYPE_BYTE {
            // The `ay` fast path: one copy of the whole block.
            var pointer: UnsafeRawPointer?
            var count: Int32 = 0
            withUnsafeMutablePointer(to: &pointer) {
                dbus_message_iter_get_fixed_array(&sub, UnsafeMutableRawPointer($0), &count)
            }
            guard let pointer, count > 0 else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
        }
        let elementSignature =
            dbus_message_iter_get_signature(&sub).map { signature in
                defer { dbus_free(signature) }
                return String(cString: signature)
            } ?? ""
        if elementType == CDBUS_TYPE_DICT_ENTRY {
            var entries: [DBusDictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_DICT_ENTRY {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entry)
                guard let key = read(&entry, keepingDescriptors: keep) else { return nil }
                dbus_message_iter_next(&entry)
                guard let value = read(&entry, keepingDescriptors: keep) else { return nil }
                entries.append(DBusDictionaryEntry(key: key, value: value))
                dbus_message_iter_next(&sub)
            }
            let inner = elementSignature.dropFirst().dropLast()
            let keySignature = String(inner.prefix(1))
            return .dictionary(
                keySignature: keySignature, valueSignature: String(inner.dropFirst()), entries)
        }
        var elements: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
            guard let element = read(&sub, keepingDescriptors: keep) else { return nil }
            elements.append(element)
            dbus_message_iter_next(&sub)
        }
        return .array(elementSignature: elementSignature, elements)
    }

    // MARK: Writing

    private static func appendBasic<T>(_ type: Int32, _ value: T, to iterator: inout DBusMessageIter) -> Bool {
        var copy = value
        return withUnsafePointer(to: &copy) { dbus_message_iter_append_basic(&iterator, type, $0) != 0 }
    }

    private static func appendString(_ type: Int32, _ text: String, to iterator: inout DBusMessageIter) -> Bool {
        text.withCString { characters in
            var pointer: UnsafePointer<CChar>? = characters
            return withUnsafePointer(to: &pointer) { dbus_message_iter_append_basic(&iterator, type, $0) != 0 }
        }
    }

    static func append(_ value: DBusValue, to iterator: inout DBusMessageIter) -> Bool {
        switch value {
        case .byte(let byte): return appendBasic(CDBUS_TYPE_BYTE, byte, to: &iterator)
        case .boolean(let flag): return appendBasic(CDBUS_TYPE_BOOLEAN, dbus_bool_t(flag ? 1 : 0), to: &iterator)
        case .int16(let number): return appendBasic(CDBUS_TYPE_INT16, number, to: &iterator)
        case .uint16(let number): return appendBasic(CDBUS_TYPE_UINT16, number, to: &iterator)
        case .int32(let number): return appendBasic(CDBUS_TYPE_INT32, number, to: &iterator)
        case .uint32(let number): return appendBasic(CDBUS_TYPE_UINT32, number, to: &iterator)
        case .int64(let number): return appendBasic(CDBUS_TYPE_INT64, number, to: &iterator)
        case .uint64(let number): return appendBasic(CDBUS_TYPE_UINT64, number, to: &iterator)
        case .double(let number): return appendBasic(CDBUS_TYPE_DOUBLE, number, to: &iterator)
        case .unixFD(let descriptor): return appendBasic(CDBUS_TYPE_UNIX_FD, descriptor, to: &iterator)
        case .string(let text):
            guard dbus_validate_utf8(text, nil) != 0 else { return false }
            return appendString(CDBUS_TYPE_STRING, text, to: &iterator)
        case .objectPath(let path):
            guard dbus_validate_path(path, nil) != 0 else { return false }
            return appendString(CDBUS_TYPE_OBJECT_PATH, path, to: &iterator)
        case .signature(let signature):
            guard dbus_signature_validate(signature, nil) != 0 else { return false }
            return appendString(CDBUS_TYPE_SIGNATURE, signature, to: &iterator)
        case .bytes(let bytes):
            return container(CDBUS_TYPE_ARRAY, "y", &iterator) { sub in
                bytes.withUnsafeBufferPointer { buffer in
                    var base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)
                    return withUnsafePointer(to: &base) {
                        dbus_message_iter_append_fixed_array(&sub, CDBUS_TYPE_BYTE, $0, Int32(bytes.count)) != 0
                    }
                }
            }
        case .array(let elementSignature, let elements):
            guard dbus_signature_validate_single(elementSignature, nil) != 0,
                elements.allSatisfy({ $0.signature == elementSignature })
            else { return false }
            return container(CDBUS_TYPE_ARRAY, elementSignature, &iterator) { sub in
                elements.allSatisfy { append($0, to: &sub) }
            }
        case .dictionary(let keySignature, let valueSignature, let entries):
            let entrySignature = "{" + keySignature + valueSignature + "}"
            guard dbus_signature_validate_single("a" + entrySignature, nil) != 0 else { return false }
            return container(CDBUS_TYPE_ARRAY, entrySignature, &iterator) { sub in
                entries.allSatisfy { entry in
                    entry.key.signature == keySignature && entry.value.signature == valueSignature
                        && container(CDBUS_TYPE_DICT_ENTRY, nil, &sub) { pair in
                            append(entry.key, to: &pair) && append(entry.value, to: &pair)
                        }
                }
            }
        case .structure(let members):
            guard !members.isEmpty else { return false }
            return container(CDBUS_TYPE_STRUCT, nil, &iterator) { sub in members.allSatisfy { append($0, to: &sub) } }
        case .variant(let inner):
            return container(CDBUS_TYPE_VARIANT, inner.signature, &iterator) { sub in append(inner, to: &sub) }
        }
    }

    private static func container(
        _ type: Int32, _ signature: String?, _ iterator: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) -> Bool
    ) -> Bool {
        var sub = DBusMessageIter()
        let opened: Bool =
            if let signature {
                signature.withCString { dbus_message_iter_open_container(&iterator, type, $0, &sub) != 0 }
            } else {
                dbus_message_iter_open_container(&iterator, type, nil, &sub) != 0
            }
        guard opened else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(&iterator, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iterator, &sub) != 0
    }
}
