package dev.capstan;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * An {@link Tool}-annotated method as a tool: schema from its parameters, arguments bound straight from the
 * arguments' JSON text to the parameters in one pass (integers, numbers, booleans and strings read in place, any other
 * value by Jackson's reader for the parameter's type), no tree in between.
 */
final class MethodTool implements ToolHandler {
    private static final int OTHER = 0, LONG = 1, INT = 2, DOUBLE = 3, BOOLEAN = 4, STRING = 5;

    private final Method method;
    private final Object receiver;
    private final String[] names;
    private final byte[][] keys;
    private final JavaType[] types;
    private final int[] kinds;
    private final ObjectReader[] readers;
    /** The method as a handle taking the bound values (null where the class is not accessible: Method.invoke). */
    private final MethodHandle invoker;

    MethodTool(Method method, Object receiver) {
        if (receiver == null && !Modifier.isStatic(method.getModifiers())) {
            throw new IllegalArgumentException(method + " is not static: register an instance");
        }
        this.method = method;
        this.receiver = receiver;
        Parameter[] ps = method.getParameters();
        names = new String[ps.length];
        types = new JavaType[ps.length];
        kinds = new int[ps.length];
        readers = new ObjectReader[ps.length];
        for (int i = 0; i < ps.length; i++) {
            Param p = ps[i].getAnnotation(Param.class);
            if (p != null && !p.name().isEmpty()) names[i] = p.name();
            else if (ps[i].isNamePresent()) names[i] = ps[i].getName();
            else throw new IllegalArgumentException(method + ": compile with -parameters or name each @Param");
            types[i] = Json.MAPPER.getTypeFactory().constructType(ps[i].getParameterizedType());
            kinds[i] = kindOf(ps[i].getType());
            readers[i] = Json.MAPPER.readerFor(types[i]);
        }
        keys = JsonCursor.names(names);
        invoker = handle(method, receiver, ps.length);
    }

    /** {@code (Object[]) -> Object} calling the method: a tenth of Method.invoke's cost, also before C2. */
    private static MethodHandle handle(Method method, Object receiver, int n) {
        try {
            MethodHandle h = MethodHandles.lookup().unreflect(method);
            if (!Modifier.isStatic(method.getModifiers())) h = h.bindTo(receiver); // a static one ignores it
            return h.asSpreader(Object[].class, n).asType(MethodType.methodType(Object.class, Object[].class));
        } catch (IllegalAccessException e) {
            return null; // its class is not public: Method.invoke says so at the call, as before
        }
    }

    private static int kindOf(Class<?> c) {
        if (c == long.class || c == Long.class) return LONG;
        if (c == int.class || c == Integer.class) return INT;
        if (c == double.class || c == Double.class) return DOUBLE;
        if (c == boolean.class || c == Boolean.class) return BOOLEAN;
        if (c == String.class) return STRING;
        return OTHER;
    }

    String schema() {
        Parameter[] ps = method.getParameters();
        Schemas.Builder b = new Schemas.Builder();
        for (int i = 0; i < ps.length; i++) {
            Param p = ps[i].getAnnotation(Param.class);
            b.property(names[i], ps[i].getParameterizedType(), p == null ? "" : p.value());
        }
        return b.build();
    }

    /** The callback path: the call's arguments text bound and the method run. */
    @Override
    public Object call(ToolCall call) throws Exception {
        return invoke(bind(call.argumentsJson()));
    }

    /** {@link #bind(JsonCursor)} of an arguments object's text. */
    Object[] bind(String argumentsJson) throws IOException {
        byte[] b = argumentsJson.getBytes(StandardCharsets.UTF_8);
        return bind(new JsonCursor(b, 0, b.length));
    }

    /**
     * The arguments object at {@code c} bound to the parameters in one pass (a missing or null one: null, or
     * an empty Optional), {@code c} left after it. A value the parameter's type cannot take throws
     * IllegalArgumentException, as Jackson's convertValue did; text that is not JSON, IOException.
     */
    Object[] bind(JsonCursor c) throws IOException {
        Object[] values = new Object[names.length];
        c.expect('{');
        for (boolean first = true; c.more('}', first); first = false) {
            int i = c.key(keys);
            if (i < 0) c.skip();
            else if (!c.literal("null")) values[i] = read(c, i);
        }
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null && types[i].getRawClass() == Optional.class) values[i] = Optional.empty();
        }
        return values;
    }

    /** Parameter {@code i}'s value at {@code c}: a scalar the parameter takes as it is, else Jackson's. */
    private Object read(JsonCursor c, int i) throws IOException {
        int next = c.peek();
        int at = c.i;
        switch (kinds[i]) {
            case LONG -> {
                if (c.integer()) return c.num;
            }
            case INT -> {
                if (c.integer() && c.num == (int) c.num) return (int) c.num;
                c.i = at; // out of int's range: Jackson's error
            }
            case DOUBLE -> {
                if (next == '-' || (next >= '0' && next <= '9')) return Double.parseDouble(c.text(c.skip()));
            }
            case BOOLEAN -> {
                if (c.literal("true")) return Boolean.TRUE;
                if (c.literal("false")) return Boolean.FALSE;
            }
            case STRING -> {
                if (next == '"') return c.string();
            }
            default -> { }
        }
        int from = c.skip();
        try {
            return readers[i].readValue(c.b, from, c.i - from);
        } catch (IOException e) { // what convertValue threw for it: an IllegalArgumentException
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    Object invoke(Object[] values) throws Exception {
        if (invoker != null) {
            try {
                return (Object) invoker.invokeExact(values);
            } catch (Exception | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new java.lang.reflect.UndeclaredThrowableException(t);
            }
        }
        try {
            return method.invoke(receiver, values);
        } catch (java.lang.reflect.InvocationTargetException e) {
            Throwable c = e.getCause();
            if (c instanceof Exception ex) throw ex;
            throw e;
        }
    }
}
