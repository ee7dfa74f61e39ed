package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.fail;

import io.rdma4j.cm.Connector;
import io.rdma4j.messaging.MessagingGroup;
import io.rdma4j.verbs.Context;
import java.io.IOException;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReader;
import java.lang.module.ModuleReference;
import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The public API of each of rdma4j's modules, as one listing per module under {@code api/}: every public and
 * protected type, constructor, method and field of the packages the module exports to everyone. A change to the
 * surface fails this test until the listing is rewritten ({@code -Drdma4j.api.update=true}) and committed, so that
 * every change to the API shows in review as a diff of {@code api/}.
 */
class PublicApiReportTest {

    private static final boolean UPDATE = Boolean.getBoolean("rdma4j.api.update");

    @ParameterizedTest
    @ValueSource(classes = {Context.class, Connector.class, MessagingGroup.class})
    void theListingIsTheCommittedOne(Class<?> member) throws IOException {
        ModuleReference module = moduleOf(member);
        String name = module.descriptor().name();
        String listing = listing(module, member.getClassLoader());
        Path committed = Path.of("..", "api", name + ".txt");
        if (UPDATE) {
            Files.writeString(committed, listing);
            return;
        }
        String before = Files.exists(committed) ? Files.readString(committed) : "";
        if (!before.equals(listing)) {
            fail("the public API of " + name + " changed; review the change and run with -Drdma4j.api.update=true to"
                    + " rewrite " + committed.normalize() + ", then commit it:\n" + difference(before, listing));
        }
    }

    /**
     * No wide positional record in the API: a record's canonical constructor is API, so each new C field would break
     * its callers, and a call with a dozen positional numbers cannot be read. Inputs take withers or builders,
     * outputs are final classes with accessors.
     */
    @ParameterizedTest
    @ValueSource(classes = {Context.class, Connector.class, MessagingGroup.class})
    void noPublicRecordHasMoreThanSixComponents(Class<?> member) throws IOException {
        ModuleReference module = moduleOf(member);
        List<String> wide = new ArrayList<>();
        for (Class<?> type : exportedTypes(module, member.getClassLoader())) {
            if (type.isRecord() && type.getRecordComponents().length > 6) {
                wide.add(type.getName() + " (" + type.getRecordComponents().length + " components)");
            }
        }
        if (!wide.isEmpty()) {
            fail("wide positional records in " + module.descriptor().name() + ": " + wide);
        }
    }

    /** The module's reference, found where the class was loaded from (a jar or an exploded module). */
    private static ModuleReference moduleOf(Class<?> member) {
        try {
            Path location = Path.of(member.getProtectionDomain().getCodeSource().getLocation().toURI());
            Set<ModuleReference> found = ModuleFinder.of(location).findAll();
            if (found.size() != 1) {
                throw new IllegalStateException(location + " holds " + found.size() + " modules");
            }
            return found.iterator().next();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static String listing(ModuleReference module, ClassLoader loader) throws IOException {
        StringBuilder out = new StringBuilder("# module ").append(module.descriptor().name()).append(", exported: ")
                .append(String.join(", ", exportedPackages(module))).append('\n');
        for (Class<?> type : exportedTypes(module, loader)) {
            out.append('\n').append(declaration(type)).append('\n');
            for (String member : members(type)) {
                out.append("  ").append(member).append('\n');
            }
        }
        return out.toString();
    }

    /** The packages {@code module} exports to everyone. */
    private static Set<String> exportedPackages(ModuleReference module) {
        Set<String> exported = new TreeSet<>();
        module.descriptor().exports().stream().filter(e -> !e.isQualified()).forEach(e -> exported.add(e.source()));
        return exported;
    }

    /** The visible types of the packages {@code module} exports to everyone, by name. */
    private static List<Class<?>> exportedTypes(ModuleReference module, ClassLoader loader) throws IOException {
        Set<String> exported = exportedPackages(module);
        Set<String> names = new TreeSet<>();
        try (ModuleReader reader = module.open(); Stream<String> all = reader.list()) {
            all.filter(n -> n.endsWith(".class") && !n.equals("module-info.class"))
                    .map(n -> n.substring(0, n.length() - ".class".length()).replace('/', '.'))
                    .filter(n -> exported.contains(n.substring(0, n.lastIndexOf('.'))))
                    .forEach(names::add);
        }
        List<Class<?>> types = new ArrayList<>();
        for (String name : names) {
            try {
                Class<?> type = Class.forName(name, false, loader);
                if (visible(type)) {
                    types.add(type);
                }
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
        }
        return types;
    }

    /** Public, and nested only in public types (a protected nested type of a public class counts too). */
    private static boolean visible(Class<?> type) {
        for (Class<?> t = type; t != null; t = t.getDeclaringClass()) {
            int modifiers = t.getModifiers();
            if (!Modifier.isPublic(modifiers) && !(t.getDeclaringClass() != null && Modifier.isProtected(modifiers))) {
                return false;
            }
        }
        return !type.isSynthetic() && !type.isAnonymousClass() && !type.isLocalClass();
    }

    private static String declaration(Class<?> type) {
        String kind = type.isAnnotation() ? "@interface" : type.isInterface() ? "interface" : type.isEnum() ? "enum"
                : type.isRecord() ? "record" : "class";
        int modifiers = type.getModifiers() & ~(type.isInterface() ? Modifier.ABSTRACT : 0);
        if (type.isEnum() || type.isRecord()) {
            modifiers &= ~(Modifier.FINAL | Modifier.STATIC);
        }
        StringBuilder line = new StringBuilder(Modifier.toString(modifiers)).append(' ').append(kind).append(' ')
                .append(type.getTypeName());
        if (type.getTypeParameters().length > 0) {
            line.append(Arrays.stream(type.getTypeParameters()).map(Object::toString)
                    .collect(java.util.stream.Collectors.joining(", ", "<", ">")));
        }
        if (type.getGenericSuperclass() != null && !type.isEnum() && !type.isRecord()
                && type.getSuperclass() != Object.class) {
            line.append(" extends ").append(type.getGenericSuperclass().getTypeName());
        }
        if (type.getGenericInterfaces().length > 0) {
            line.append(type.isInterface() ? " extends " : " implements ").append(Arrays.stream(type.getGenericInterfaces())
                    .map(java.lang.reflect.Type::getTypeName).collect(java.util.stream.Collectors.joining(", ")));
        }
        if (type.isSealed()) {
            line.append(" permits ").append(Arrays.stream(type.getPermittedSubclasses()).map(Class::getTypeName)
                    .collect(java.util.stream.Collectors.joining(", ")));
        }
        return line.toString();
    }

    /**
     * The type's public and protected members, with those of hidden superclasses, sorted; for a record, its
     * components first, in order.
     */
    private static List<String> members(Class<?> type) {
        List<String> lines = new ArrayList<>();
        if (type.isRecord()) {
            lines.add("components " + Arrays.stream(type.getRecordComponents())
                    .map(c -> c.getGenericType().getTypeName() + " " + c.getName())
                    .collect(java.util.stream.Collectors.joining(", ", "(", ")")));
        }
        Set<String> sorted = new TreeSet<>();
        List<AccessibleObject> all = new ArrayList<>();
        all.addAll(Arrays.asList(type.getDeclaredConstructors()));
        // What a hidden superclass declares is this type's API too (a verbs object's close and isClosed).
        for (Class<?> t = type; t != null && (t == type || !visible(t)); t = t.getSuperclass()) {
            all.addAll(Arrays.asList(t.getDeclaredMethods()));
            all.addAll(Arrays.asList(t.getDeclaredFields()));
        }
        for (AccessibleObject object : all) {
            Member member = (Member) object;
            int modifiers = member.getModifiers();
            boolean bridge = member instanceof java.lang.reflect.Method m && m.isBridge();
            if (member.isSynthetic() || bridge || !(Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers))) {
                continue;
            }
            String text = switch (object) {
                case Constructor<?> c -> c.toGenericString();
                case Executable e -> e.toGenericString();
                case Field f -> f.toGenericString();
                default -> throw new IllegalStateException(object.toString());
            };
            String owner = member.getDeclaringClass().getTypeName() + ".";
            sorted.add(text.replace(owner, "").replace(type.getPackageName() + ".", ""));
        }
        lines.addAll(sorted);
        return lines;
    }

    /** The lines only in {@code before} ("- ") and only in {@code after} ("+ "), each in its order. */
    private static String difference(String before, String after) {
        Set<String> old = new LinkedHashSet<>(before.lines().toList());
        Set<String> now = new LinkedHashSet<>(after.lines().toList());
        StringBuilder out = new StringBuilder();
        old.stream().filter(l -> !now.contains(l)).forEach(l -> out.append("- ").append(l).append('\n'));
        now.stream().filter(l -> !old.contains(l)).forEach(l -> out.append("+ ").append(l).append('\n'));
        return out.toString();
    }
}
