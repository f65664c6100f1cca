// Lists Flink's configuration options and built-in functions by reflection over Flink's jars.
//
// Run by scripts/generate_flink_catalog.py (java FlinkCatalogScanner.java <jar>...); prints
// tab-separated lines:
//   option  <key>  <kind: key|fallback|deprecated>  <primary key>  <default>  <declaring class>
//   function  <name>  <kind>  <internal: true|false>  <sql name or ->  <declaring class>
import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

public class FlinkCatalogScanner {
    public static void main(String[] args) throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String a : args) urls.add(new File(a).toURI().toURL());
        URLClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]), FlinkCatalogScanner.class.getClassLoader());
        Class<?> optionClass = Class.forName("org.apache.flink.configuration.ConfigOption", false, loader);
        Class<?> functionClass = null;
        try {
            functionClass = Class.forName("org.apache.flink.table.functions.BuiltInFunctionDefinition", false, loader);
        } catch (ClassNotFoundException e) { /* no table jar */ }
        TreeSet<String> lines = new TreeSet<>();
        for (String a : args) {
            try (JarFile jar = new JarFile(a)) {
                Enumeration<JarEntry> entries = jar.entries();
                while (entries.hasMoreElements()) {
                    String name = entries.nextElement().getName();
                    if (!name.endsWith(".class") || !name.startsWith("org/apache/flink/") || name.contains("/shaded/")) continue;
                    String cls = name.substring(0, name.length() - 6).replace('/', '.');
                    Field[] fields;
                    Object module = null;  // a Scala object's singleton: its options are instance fields
                    try {
                        Class<?> c = Class.forName(cls, false, loader);
                        fields = c.getDeclaredFields();
                        if (cls.endsWith("$")) {
                            try {
                                Field m = c.getDeclaredField("MODULE$");
                                m.setAccessible(true);
                                module = m.get(null);
                            } catch (Throwable t) { module = null; }
                        }
                    } catch (Throwable t) { continue; }
                    for (Field f : fields) {
                        boolean isStatic = Modifier.isStatic(f.getModifiers());
                        if (!isStatic && module == null) continue;
                        boolean isOption = optionClass.isAssignableFrom(f.getType());
                        boolean isFunction = functionClass != null && functionClass.isAssignableFrom(f.getType());
                        if (!isOption && !isFunction) continue;
                        Object value;
                        try {
                            f.setAccessible(true);
                            value = f.get(isStatic ? null : module);
                        } catch (Throwable t) { continue; }
                        if (value == null) continue;
                        if (isOption) option(value, cls, lines);
                        else function(value, cls, lines);
                    }
                }
            }
        }
        for (String line : lines) System.out.println(line);
    }

    static String clean(Object o) {
        return o == null ? "-" : String.valueOf(o).replace('\t', ' ').replace('\n', ' ');
    }

    static void option(Object option, String cls, TreeSet<String> lines) throws Exception {
        String key = (String) option.getClass().getMethod("key").invoke(option);
        Object dflt = option.getClass().getMethod("defaultValue").invoke(option);
        lines.add(String.join("\t", "option", key, "key", key, clean(dflt), cls));
        Iterable<?> fallbacks = (Iterable<?>) option.getClass().getMethod("fallbackKeys").invoke(option);
        for (Object fb : fallbacks) {
            String fkey = (String) fb.getClass().getMethod("getKey").invoke(fb);
            boolean deprecated = (Boolean) fb.getClass().getMethod("isDeprecated").invoke(fb);
            lines.add(String.join("\t", "option", fkey, deprecated ? "deprecated" : "fallback", key, clean(dflt), cls));
        }
    }

    static void function(Object def, String cls, TreeSet<String> lines) throws Exception {
        Method getName = def.getClass().getMethod("getName");
        String name = (String) getName.invoke(def);
        String kind = clean(def.getClass().getMethod("getKind").invoke(def));
        String internal = clean(def.getClass().getMethod("isInternal").invoke(def));
        String sqlName = "-";
        try {
            Object opt = def.getClass().getMethod("getSqlName").invoke(def);
            if (opt instanceof java.util.Optional && ((java.util.Optional<?>) opt).isPresent()) sqlName = clean(((java.util.Optional<?>) opt).get());
        } catch (NoSuchMethodException e) { /* older Flink */ }
        lines.add(String.join("\t", "function", name, kind, internal, sqlName, cls));
    }
}
