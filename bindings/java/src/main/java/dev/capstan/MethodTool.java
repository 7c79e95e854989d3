package dev.capstan;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.util.Optional;

/** An {@link Tool}-annotated method as a tool: schema from its parameters, arguments bound by Jackson. */
final class MethodTool {
    private final Method method;
    private final Object receiver;
    private final String[] names;
    private final JavaType[] types;

    MethodTool(Method method, Object receiver) {
        if (receiver == null && !Modifier.isStatic(method.getModifiers())) {
            throw new IllegalArgumentException(method + " is not static: register an instance");
        }
        this.method = method;
        this.receiver = receiver;
        Parameter[] ps = method.getParameters();
        names = new String[ps.length];
        types = new JavaType[ps.length];
        for (int i = 0; i < ps.length; i++) {
            Param p = ps[i].getAnnotation(Param.class);
            if (p != null && !p.name().isEmpty()) names[i] = p.name();
            else if (ps[i].isNamePresent()) names[i] = ps[i].getName();
            else throw new IllegalArgumentException(method + ": compile with -parameters or name each @Param");
            types[i] = Json.MAPPER.getTypeFactory().constructType(ps[i].getParameterizedType());
        }
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

    /**
     * {@code v} as a {@code type}: the common scalar cases read straight from the node (what Jackson's
     * convertValue gives for them, without its serialize-and-parse round trip), anything else through Jackson.
     */
    static Object bind(JsonNode v, JavaType type) {
        Class<?> c = type.getRawClass();
        if ((c == long.class || c == Long.class) && v.isIntegralNumber() && v.canConvertToLong()) return v.longValue();
        if ((c == int.class || c == Integer.class) && v.isIntegralNumber() && v.canConvertToInt()) return v.intValue();
        if ((c == double.class || c == Double.class) && v.isNumber()) return v.doubleValue();
        if ((c == boolean.class || c == Boolean.class) && v.isBoolean()) return v.booleanValue();
        if (c == String.class && v.isTextual()) return v.textValue();
        return Json.MAPPER.convertValue(v, type);
    }

    Object invoke(ToolCall call) throws Exception {
        JsonNode args = call.arguments();
        Object[] values = new Object[names.length];
        for (int i = 0; i < names.length; i++) {
            JsonNode v = args.get(names[i]);
            if (v == null || v.isNull()) {
                values[i] = types[i].getRawClass() == Optional.class ? Optional.empty() : null;
            } else {
                values[i] = bind(v, types[i]);
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
